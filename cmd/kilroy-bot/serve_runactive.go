package main

import (
	"context"
	"errors"
	"time"

	"github.com/kilroy-bot/kilroy-bot/queue"
)

// runActive tells the run pages whether the queue still works on a run:
// queued, or running (a run whose process died goes back to queued when
// its heartbeat goes stale, and resumes). A run the queue has finished or
// no longer knows is not active, whatever its files say. When the queue
// does not answer, the run counts as active: the page then shows what its
// files say.
func runActive(q *queue.Queue) func(runID string) bool {
	return func(runID string) bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		run, err := q.RunByID(ctx, runID)
		if err != nil {
			return errors.Is(err, queue.ErrUnavailable)
		}
		return run.Unfinished()
	}
}
