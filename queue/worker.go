package queue

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/riverqueue/river"
)

// ErrStopping is the cause of a handler's context cancelled because the
// queue is shutting down; the run is handed back for the next start.
var ErrStopping = errors.New("queue stopping")

// CancelledError is the context cause a handler sees when its run was
// superseded by a newer head SHA or cancelled with `/kilroy cancel`:
//
//	var ce *queue.CancelledError
//	if errors.As(context.Cause(ctx), &ce) { … ce.SupersededBy … }
type CancelledError struct {
	RunID string
	// SupersededBy is the head SHA that superseded the run; empty when it
	// was cancelled on request.
	SupersededBy string
	// CancelledBy is who cancelled the run (CancelBy's by), when known.
	CancelledBy string
}

func (e *CancelledError) Error() string {
	switch {
	case e.SupersededBy != "":
		return "superseded by " + e.SupersededBy
	case e.CancelledBy != "":
		return "cancelled by " + e.CancelledBy
	}
	return "cancelled"
}

// RunJob is what a handler works on.
type RunJob struct {
	RunArgs
	JobID int64
	// Resumes counts how often the run was interrupted (a dead process or a
	// shutdown that cancelled it) and handed back. Above zero the handler
	// resumes the run from its checkpoint, or finishes it.
	Resumes int
}

// runWorker adapts River's worker interface to the queue's handler.
type runWorker struct {
	river.WorkerDefaults[RunArgs]
	q *Queue
}

func (w *runWorker) Work(ctx context.Context, job *river.Job[RunArgs]) error {
	return w.q.work(ctx, job)
}

// work claims the run, calls the handler with a context that says why it was
// cancelled, and records the outcome. The returned error tells River how to
// finalise the job.
func (q *Queue) work(riverCtx context.Context, job *river.Job[RunArgs]) error {
	runID := job.Args.RunID
	// A worker is free once this returns: the scheduler picks the next run
	// (deferred first, so it runs after the run left q.active).
	defer q.kickDispatch()
	// The handler's context is cancelled by us, with a cause, rather than
	// inherited: River's cancellation arrives through the AfterFunc, ours
	// through q.active. Registered before the claim, so a supersede that
	// commits after the claim always finds it.
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(riverCtx))
	defer cancel(nil)
	q.active.add(runID, cancel)
	defer q.active.remove(runID)
	stop := context.AfterFunc(riverCtx, func() { cancel(q.cancelCause(riverCtx, runID)) })
	defer stop()

	run, claimed, err := q.claim(riverCtx, runID)
	if err != nil {
		// The database is unreachable; try again later rather than lose it.
		q.log.Error("queue: claim run", "run", runID, "err", err)
		return river.JobSnooze(10 * time.Second)
	}
	if !claimed {
		return unclaimedResult(run)
	}
	herr := callHandler(ctx, q.handlers.Run, RunJob{RunArgs: job.Args, JobID: job.ID, Resumes: run.Resumes})
	return q.finish(riverCtx, ctx, runID, herr)
}

// unclaimedResult finalises a job whose run is no longer queued: stopped
// before it started, or (after a restart) already finished.
func unclaimedResult(run Run) error {
	if run.State == stateDone {
		return nil
	}
	return river.JobCancel(fmt.Errorf("run %s is %s", run.ID, run.State))
}

func (q *Queue) claim(ctx context.Context, runID string) (Run, bool, error) {
	now := nowMillis()
	n, err := q.eng.pool().exec(ctx, q.q.claimRun, q.owner, now, now, runID)
	if err != nil {
		return Run{}, false, fmt.Errorf("claim run %s: %w", runID, err)
	}
	run, err := q.getRun(ctx, runID)
	if err != nil {
		return Run{}, false, err
	}
	return run, n == 1, nil
}

// cancelCause turns River's cancellation of a job's context into the cause
// the handler sees. River cancels with ErrJobCancelledRemotely when the job
// was cancelled (supersede, /kilroy cancel): our runs row says which.
func (q *Queue) cancelCause(riverCtx context.Context, runID string) error {
	cause := context.Cause(riverCtx)
	if errors.Is(cause, river.ErrJobCancelledRemotely) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(riverCtx), 10*time.Second)
		defer cancel()
		if run, err := q.getRun(ctx, runID); err == nil {
			return cancelledError(runID, run.State, run.SupersededBy)
		}
		return &CancelledError{RunID: runID}
	}
	if q.stopping.Load() {
		return fmt.Errorf("%w: %w", ErrStopping, cause)
	}
	return cause
}

// callHandler turns a panic into an error, so the run's row is still
// released and the process survives one bad run.
func callHandler(ctx context.Context, h func(context.Context, RunJob) error, job RunJob) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("run %s: handler panic: %v\n%s", job.RunID, p, debug.Stack())
		}
	}()
	return h(ctx, job)
}

// finish records how the handler ended and tells River: done → completed;
// cancelled remotely → cancelled; cut short by Stop → snoozed, so the next
// start resumes it (River's advice for long jobs on shutdown); any other
// error → failed for good (attempted once).
func (q *Queue) finish(riverCtx, handlerCtx context.Context, runID string, herr error) error {
	// Record the outcome even though riverCtx may be cancelled.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(riverCtx), 30*time.Second)
	defer cancel()
	var ce *CancelledError
	switch {
	case herr == nil:
		q.release(ctx, q.q.finishRun, stateDone, nowMillis(), runID, q.owner)
		return nil
	case errors.As(context.Cause(handlerCtx), &ce):
		// The run's row already says superseded or cancelled; JobCancel
		// makes River finalise the job so, whichever way the cancel came.
		q.release(ctx, q.q.finishRun, stateCancelled, nowMillis(), runID, q.owner)
		return river.JobCancel(herr)
	case riverCtx.Err() != nil && q.stopping.Load():
		q.release(ctx, q.q.requeueRun, nowMillis(), runID, q.owner)
		return river.JobSnooze(0)
	default:
		q.release(ctx, q.q.finishRun, stateFailed, nowMillis(), runID, q.owner)
		return herr
	}
}

// release gives up this process's hold on a run. A failure is only logged:
// the heartbeat stops with the process and the run is reclaimed then.
func (q *Queue) release(ctx context.Context, stmt string, args ...any) {
	if _, err := q.eng.pool().exec(ctx, stmt, args...); err != nil {
		q.log.Error("queue: release run", "err", err)
	}
}
