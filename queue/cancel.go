package queue

import (
	"context"
	"fmt"
)

// Cancel cancels every unfinished run of a pull request's pipeline, for
// `/kilroy cancel`. It returns the runs it cancelled with the state they were
// in: the caller completes the checks of queued ones; running ones see their
// context cancelled with a *CancelledError and complete their own.
func (q *Queue) Cancel(ctx context.Context, repo string, pr int, pipeline string) ([]Run, error) {
	return q.CancelBy(ctx, repo, pr, pipeline, "")
}

// CancelBy is Cancel on behalf of someone: by (such as "@octocat") is
// recorded with the runs and reaches running handlers as
// CancelledError.CancelledBy, so their checks can say who cancelled them.
// An empty pipeline cancels the runs of every pipeline of the pull request.
func (q *Queue) CancelBy(ctx context.Context, repo string, pr int, pipeline, by string) ([]Run, error) {
	var stopped []Superseded
	err := q.eng.inTx(ctx, func(tx txOps) error {
		var err error
		stopped, err = q.stopRuns(ctx, tx, stopSpec{repo: repo, pr: pr, pipeline: pipeline,
			state: stateCancelled, by: by}, nowMillis())
		return err
	})
	if err != nil {
		return nil, unavailable(fmt.Sprintf("cancel %s#%d %s", repo, pr, pipeline), err)
	}
	q.signalStopped(stopped, stateCancelled)
	runs := make([]Run, 0, len(stopped))
	for _, s := range stopped {
		runs = append(runs, s.Run)
	}
	return runs, nil
}

// stopSpec says which unfinished runs stopRuns stops and how: those of
// (repo, pr, pipeline) whose head is not keepSHA (an empty keepSHA stops
// every one; an empty pipeline means all pipelines), moved to state
// (superseded or cancelled) with by recorded: the superseding SHA, or who
// cancelled.
type stopSpec struct {
	repo              string
	pr                int
	pipeline, keepSHA string
	state, by         string
}

// stopRuns stops the runs spec names and cancels their jobs, all in tx.
func (q *Queue) stopRuns(ctx context.Context, tx txOps, spec stopSpec, now int64) ([]Superseded, error) {
	repo, pr, pipeline := spec.repo, spec.pr, spec.pipeline
	var runs []Run
	var err error
	if pipeline == "" {
		runs, err = queryRuns(ctx, tx, q.q.unfinishedRunsOfPR, repo, pr, spec.keepSHA)
	} else {
		runs, err = queryRuns(ctx, tx, q.q.unfinishedRuns, repo, pr, pipeline, spec.keepSHA)
	}
	if err != nil {
		return nil, fmt.Errorf("unfinished runs of %s#%d %s: %w", repo, pr, pipeline, err)
	}
	return q.stopListed(ctx, tx, runs, spec.state, spec.by, now)
}

// stopListed moves runs to state (superseded or cancelled) with by
// recorded and cancels their jobs, all in tx.
func (q *Queue) stopListed(ctx context.Context, tx txOps, runs []Run, state, by string, now int64) ([]Superseded, error) {
	out := make([]Superseded, 0, len(runs))
	for _, r := range runs {
		// Our row first, so the worker that may be starting this job right
		// now finds it stopped and never calls the handler.
		if _, err := tx.exec(ctx, q.q.stopRun, state, by, now, r.ID); err != nil {
			return nil, fmt.Errorf("stop run %s: %w", r.ID, err)
		}
		if err := tx.cancelJob(ctx, r.JobID); err != nil {
			return nil, fmt.Errorf("cancel job %d of run %s: %w", r.JobID, r.ID, err)
		}
		out = append(out, Superseded{Run: r, By: by})
	}
	return out, nil
}
