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
	var stopped []Superseded
	err := q.eng.inTx(ctx, func(tx txOps) error {
		var err error
		stopped, err = q.stopRuns(ctx, tx, repo, pr, pipeline, "", stateCancelled, nowMillis())
		return err
	})
	if err != nil {
		return nil, unavailable(fmt.Sprintf("cancel %s#%d %s", repo, pr, pipeline), err)
	}
	q.signalStopped(stopped)
	runs := make([]Run, 0, len(stopped))
	for _, s := range stopped {
		runs = append(runs, s.Run)
	}
	return runs, nil
}

// stopRuns moves the unfinished runs of (repo, pr, pipeline) whose head is
// not keepSHA to state (superseded or cancelled) and cancels their jobs, all
// in tx. An empty keepSHA stops every one.
func (q *Queue) stopRuns(ctx context.Context, tx txOps, repo string, pr int, pipeline, keepSHA, state string, now int64) ([]Superseded, error) {
	runs, err := queryRuns(ctx, tx, q.q.unfinishedRuns, repo, pr, pipeline, keepSHA)
	if err != nil {
		return nil, fmt.Errorf("unfinished runs of %s#%d %s: %w", repo, pr, pipeline, err)
	}
	out := make([]Superseded, 0, len(runs))
	for _, r := range runs {
		// Our row first, so the worker that may be starting this job right
		// now finds it stopped and never calls the handler.
		if _, err := tx.exec(ctx, q.q.stopRun, state, keepSHA, now, r.ID); err != nil {
			return nil, fmt.Errorf("stop run %s: %w", r.ID, err)
		}
		if err := tx.cancelJob(ctx, r.JobID); err != nil {
			return nil, fmt.Errorf("cancel job %d of run %s: %w", r.JobID, r.ID, err)
		}
		out = append(out, Superseded{Run: r, By: keepSHA})
	}
	return out, nil
}
