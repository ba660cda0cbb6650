package queue

import (
	"context"
	"fmt"
)

// CancelHead cancels every unfinished run of a commit, whichever pull
// request and pipeline, on behalf of by: for a merge group GitHub
// destroyed, whose head commit exists for that group alone. It returns the
// runs it cancelled as Cancel does.
func (q *Queue) CancelHead(ctx context.Context, repo, headSHA, by string) ([]Run, error) {
	var stopped []Superseded
	err := q.eng.inTx(ctx, func(tx txOps) error {
		runs, err := queryRuns(ctx, tx, q.q.unfinishedOfHead, repo, headSHA)
		if err != nil {
			return fmt.Errorf("unfinished runs of %s@%s: %w", repo, headSHA, err)
		}
		stopped, err = q.stopListed(ctx, tx, runs, stateCancelled, by, nowMillis())
		return err
	})
	if err != nil {
		return nil, unavailable(fmt.Sprintf("cancel %s@%s", repo, headSHA), err)
	}
	q.signalStopped(stopped, stateCancelled)
	runs := make([]Run, 0, len(stopped))
	for _, s := range stopped {
		runs = append(runs, s.Run)
	}
	return runs, nil
}
