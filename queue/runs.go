package queue

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// errNoRun is returned by getRun for an unknown run id.
var errNoRun = errors.New("no such run")

func queryRuns(ctx context.Context, db sqlExec, query string, args ...any) ([]Run, error) {
	r, err := db.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var runs []Run
	for r.Next() {
		var run Run
		if err := r.Scan(&run.ID, &run.Repo, &run.PR, &run.HeadSHA, &run.Pipeline, &run.State,
			&run.JobID, &run.SupersededBy, &run.Owner, &run.HeartbeatAt, &run.Resumes); err != nil {
			return nil, err
		}
		runs = append(runs, run)
	}
	return runs, r.Err()
}

func (q *Queue) getRun(ctx context.Context, runID string) (Run, error) {
	runs, err := queryRuns(ctx, q.eng.pool(), q.q.getRun, runID)
	if err != nil {
		return Run{}, fmt.Errorf("get run %s: %w", runID, err)
	}
	if len(runs) == 0 {
		return Run{}, fmt.Errorf("get run %s: %w", runID, errNoRun)
	}
	return runs[0], nil
}

// LookupPRBySHA returns the pull request whose head was sha, as recorded by
// EnqueueDelivery. Fork PRs' check_run and check_suite payloads carry no
// pull_requests, so re-run buttons need this.
func (q *Queue) LookupPRBySHA(ctx context.Context, repo, sha string) (pr int, ok bool, err error) {
	r, err := q.eng.pool().query(ctx, q.q.lookupHead, repo, sha)
	if err != nil {
		return 0, false, unavailable(fmt.Sprintf("lookup %s@%s", repo, sha), err)
	}
	defer r.Close()
	if r.Next() {
		if err := r.Scan(&pr); err != nil {
			return 0, false, unavailable(fmt.Sprintf("lookup %s@%s", repo, sha), err)
		}
		return pr, true, nil
	}
	if err := r.Err(); err != nil {
		return 0, false, unavailable(fmt.Sprintf("lookup %s@%s", repo, sha), err)
	}
	return 0, false, nil
}

// InterruptedRuns lists runs held by a process that is gone: its heartbeat
// is older than Options.StaleAfter or, with SQLite (one process per data
// dir), any owner but this queue. Start hands them back to the workers;
// this is for reporting and tests.
func (q *Queue) InterruptedRuns(ctx context.Context) ([]Run, error) {
	runs, err := queryRuns(ctx, q.eng.pool(), q.q.interrupted, q.owner, q.staleCutoff(q.d.exclusive))
	if err != nil {
		return nil, unavailable("interrupted runs", err)
	}
	return runs, nil
}

// staleCutoff is the heartbeat time before which an owner counts as gone.
func (q *Queue) staleCutoff(anyOwner bool) int64 {
	if anyOwner {
		return math.MaxInt64
	}
	return time.Now().Add(-q.staleAfter).UnixMilli()
}

// reclaim hands interrupted runs back to River: the run becomes queued
// again (Resumes+1) and its job available, so a worker picks it up and the
// handler resumes or finishes it. A run already superseded or cancelled
// keeps its state; its job is made available too, and the worker then
// cancels it without calling the handler, so River finalises it at once.
// Each run is taken in its own transaction, conditional on the owner and
// heartbeat it was listed with, so two replicas cannot both take it.
func (q *Queue) reclaim(ctx context.Context, anyOwner bool) ([]Run, error) {
	cutoff := q.staleCutoff(anyOwner)
	runs, err := queryRuns(ctx, q.eng.pool(), q.q.interrupted, q.owner, cutoff)
	if err != nil {
		return nil, fmt.Errorf("interrupted runs: %w", err)
	}
	taken := runs[:0]
	for _, r := range runs {
		ok, err := q.reclaimRun(ctx, r, cutoff)
		if err != nil {
			return taken, err
		}
		if ok {
			q.log.Info("queue: reclaimed interrupted run", "run", r.ID, "repo", r.Repo, "pr", r.PR,
				"pipeline", r.Pipeline, "state", r.State, "dead_owner", r.Owner)
			taken = append(taken, r)
		}
	}
	return taken, nil
}

func (q *Queue) reclaimRun(ctx context.Context, r Run, cutoff int64) (bool, error) {
	var ok bool
	err := q.eng.inTx(ctx, func(tx txOps) error {
		n, err := tx.exec(ctx, q.q.reclaimRun, nowMillis(), r.ID, r.Owner, cutoff)
		if err != nil || n == 0 {
			return err
		}
		if _, err := tx.exec(ctx, q.q.requeueJob, r.JobID); err != nil {
			return fmt.Errorf("requeue job %d: %w", r.JobID, err)
		}
		ok = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("reclaim run %s: %w", r.ID, err)
	}
	return ok, nil
}

// prune deletes deliveries, finished runs, head mappings, waiting nodes
// and answers older than before. River cleans its own finished jobs.
func (q *Queue) prune(ctx context.Context, before time.Time) error {
	ms := before.UnixMilli()
	for _, stmt := range []string{q.q.pruneDeliveries, q.q.pruneRuns, q.q.pruneHeads,
		q.q.pruneWaiting, q.q.pruneAnswers} {
		if _, err := q.eng.pool().exec(ctx, stmt, ms); err != nil {
			return fmt.Errorf("prune before %s: %w", before.Format(time.RFC3339), err)
		}
	}
	return q.pruneRunState(ctx)
}

// RunByID returns a run's row; a finished run (done, failed, cancelled,
// superseded) may still have a River job in state running for a moment,
// which new jobs of the same identity coalesce into.
func (q *Queue) RunByID(ctx context.Context, runID string) (Run, error) {
	run, err := q.getRun(ctx, runID)
	if err != nil && !errors.Is(err, errNoRun) {
		return Run{}, unavailable("run "+runID, err)
	}
	return run, err
}

// Unfinished reports whether the run is queued or running.
func (r Run) Unfinished() bool { return r.State == stateQueued || r.State == stateRunning }
