package queue

import (
	"context"
	"fmt"
	"sync"
)

// activeRuns maps the runs this process is working to their handlers'
// cancel functions. River cancels a running job's context only where its
// driver notifies (Postgres NOTIFY); the SQLite driver of River v0.47 just
// marks the job. So after committing a supersede or cancel the queue cancels
// its own handlers directly, and the heartbeat tick looks for runs stopped by
// other processes.
type activeRuns struct {
	mu sync.Mutex
	m  map[string]context.CancelCauseFunc
}

func (a *activeRuns) add(runID string, cancel context.CancelCauseFunc) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m = make(map[string]context.CancelCauseFunc)
	}
	a.m[runID] = cancel
}

func (a *activeRuns) remove(runID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.m, runID)
}

// cancel cancels the run's handler if this process is working it.
func (a *activeRuns) cancel(runID string, cause error) {
	a.mu.Lock()
	cancel := a.m[runID]
	a.mu.Unlock()
	if cancel != nil {
		cancel(cause)
	}
}

// signalStopped cancels the local handlers of runs just moved to state
// (superseded or cancelled); called once their transaction has committed.
func (q *Queue) signalStopped(stopped []Superseded, state string) {
	for _, s := range stopped {
		if s.State == stateRunning {
			q.active.cancel(s.ID, cancelledError(s.ID, state, s.By))
		}
	}
}

// cancelledError is the cause for a run stopped into state; by is the
// runs row's superseded_by: the superseding SHA or who cancelled.
func cancelledError(runID, state, by string) *CancelledError {
	if state == stateSuperseded {
		return &CancelledError{RunID: runID, SupersededBy: by}
	}
	return &CancelledError{RunID: runID, CancelledBy: by}
}

// pollStopped cancels local handlers whose runs another process stopped.
func (q *Queue) pollStopped(ctx context.Context) error {
	r, err := q.eng.pool().query(ctx, q.q.stoppedHeld, q.owner)
	if err != nil {
		return fmt.Errorf("stopped runs: %w", err)
	}
	defer r.Close()
	for r.Next() {
		var runID, state, by string
		if err := r.Scan(&runID, &state, &by); err != nil {
			return fmt.Errorf("stopped runs: %w", err)
		}
		q.active.cancel(runID, cancelledError(runID, state, by))
	}
	return r.Err()
}
