package queue

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Start reclaims interrupted runs (see InterruptedRuns) and starts working
// jobs: each is handed to handler, up to Options.Workers at once. The
// handler's context is cancelled when the run is superseded or cancelled
// (cause *CancelledError) or when Stop gives up waiting (cause ErrStopping).
// Cancelling ctx is a hard stop; call Stop for a graceful one.
func (q *Queue) Start(ctx context.Context, handler func(ctx context.Context, job RunJob) error) error {
	return q.StartHandlers(ctx, Handlers{Run: handler})
}

// Handlers are what Start hands jobs to, one function per job kind.
type Handlers struct {
	// Run works one pipeline run (required); see Start for its context.
	Run func(ctx context.Context, job RunJob) error
	// Event decides one accepted delivery (EnqueueEvent). An error is
	// retried with backoff, up to five attempts; its context ends when
	// the queue stops or the attempt takes over ten minutes.
	Event func(ctx context.Context, job EventJob) error
}

// StartHandlers is Start with a handler for event jobs as well as runs.
func (q *Queue) StartHandlers(ctx context.Context, h Handlers) error {
	if h.Run == nil {
		return errors.New("start queue: nil run handler")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.started {
		return errors.New("start queue: already started")
	}
	q.handlers = h
	if err := q.reclaimAtStart(ctx); err != nil {
		return unavailable("start queue", err)
	}
	if err := q.eng.start(ctx); err != nil {
		return unavailable("start queue", err)
	}
	mctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	q.stopMaint, q.maintDone = cancel, make(chan struct{})
	go q.maintain(mctx, q.maintDone)
	q.kickDispatch()
	q.started = true
	return nil
}

// reclaimAtStart hands back runs whose process is gone. With SQLite this
// process owns the database, so any run another owner holds is interrupted,
// and so is any job River still shows running: none of ours runs yet.
func (q *Queue) reclaimAtStart(ctx context.Context) error {
	runs, err := q.reclaim(ctx, q.d.exclusive)
	if err != nil {
		return err
	}
	if q.d.exclusive {
		if _, err := q.eng.pool().exec(ctx, q.q.requeueOrphanJobs); err != nil {
			return fmt.Errorf("requeue orphaned jobs: %w", err)
		}
	}
	if len(runs) > 0 {
		q.log.Info("queue: resuming interrupted runs", "count", len(runs))
	}
	return nil
}

// Stop stops taking jobs and waits for running handlers to return. When ctx
// ends first, it cancels their contexts (cause ErrStopping), waits up to 30s
// more, and hands those runs back for the next start.
func (q *Queue) Stop(ctx context.Context) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.started {
		return nil
	}
	q.stopping.Store(true)
	err := q.eng.stop(ctx)
	if err != nil && ctx.Err() != nil {
		q.log.Warn("queue: graceful stop timed out; cancelling running runs")
		hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), hardStopWait)
		err = q.eng.stopAndCancel(hctx)
		cancel()
	}
	// Heartbeats go on until every handler has returned.
	q.stopMaint()
	<-q.maintDone
	q.started = false
	q.stopping.Store(false)
	if err != nil {
		return fmt.Errorf("stop queue: %w", err)
	}
	return nil
}

// maintain heartbeats the runs this process holds, reclaims runs of
// processes that stopped heartbeating, and prunes old rows.
func (q *Queue) maintain(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	dispatching := make(chan struct{})
	go q.dispatchLoop(ctx, dispatching)
	defer func() { <-dispatching }()
	tick := time.NewTicker(q.staleAfter / 4)
	defer tick.Stop()
	lastPrune := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if _, err := q.eng.pool().exec(ctx, q.q.heartbeat, nowMillis(), q.owner); err != nil {
			q.log.Error("queue: heartbeat", "err", err)
		}
		if err := q.pollStopped(ctx); err != nil {
			q.log.Error("queue: poll stopped runs", "err", err)
		}
		if _, err := q.reclaim(ctx, false); err != nil {
			q.log.Error("queue: reclaim", "err", err)
		}
		if time.Since(lastPrune) >= pruneEvery {
			lastPrune = time.Now()
			if err := q.prune(ctx, lastPrune.Add(-retention)); err != nil {
				q.log.Error("queue: prune", "err", err)
			}
		}
	}
}
