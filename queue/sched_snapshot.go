package queue

import (
	"context"
	"fmt"
)

// snapshot reads what the picker decides on, in the dispatch
// transaction, with one statement.
func (q *Queue) snapshot(ctx context.Context, tx txOps) (schedSnapshot, error) {
	s := schedSnapshot{BusyInst: map[int64]int{}, BusyRepo: map[string]int{}, LastStarted: map[int64]int64{}}
	err := scanEach(ctx, tx, q.sched.q.snapshot, func(r rows) error {
		var kind int
		var inst, n int64
		var repo string
		if err := r.Scan(&kind, &inst, &repo, &n); err != nil {
			return err
		}
		switch kind {
		case 0:
			s.BusyInst[inst] += int(n)
			s.BusyRepo[repo] += int(n)
		case 1:
			s.Groups = append(s.Groups, schedGroup{Installation: inst, Repo: repo, Oldest: n})
		default:
			s.LastStarted[inst] = n
		}
		return nil
	})
	if err != nil {
		return s, fmt.Errorf("scheduler state: %w", err)
	}
	return s, nil
}

// markCapped records why the queued runs of capped groups wait and
// returns those not told before.
func (q *Queue) markCapped(ctx context.Context, tx txOps, s schedSnapshot) ([]CappedRun, error) {
	if q.sched.waiting == nil {
		return nil, nil
	}
	var out []CappedRun
	for _, g := range s.Groups {
		reason := capReached(s, g, q.sched.caps)
		if reason == "" {
			continue
		}
		var ids []string
		err := scanEach(ctx, tx, q.sched.q.capped, func(r rows) error {
			var id string
			err := r.Scan(&id)
			ids = append(ids, id)
			return err
		}, g.Installation, g.Repo, reason)
		if err != nil {
			return nil, fmt.Errorf("capped runs of %s: %w", g.Repo, err)
		}
		for _, id := range ids {
			if _, err := tx.exec(ctx, q.sched.q.markWaiting, reason, id); err != nil {
				return nil, fmt.Errorf("mark run %s waiting: %w", id, err)
			}
			run, err := q.runIn(ctx, tx, id)
			if err != nil {
				return nil, err
			}
			out = append(out, CappedRun{Run: run, InstallationID: g.Installation, Reason: reason})
		}
	}
	return out, nil
}

func (q *Queue) runIn(ctx context.Context, tx txOps, runID string) (Run, error) {
	runs, err := queryRuns(ctx, tx, q.q.getRun, runID)
	if err != nil || len(runs) == 0 {
		return Run{}, firstErr(err, fmt.Errorf("run %s: %w", runID, errNoRun))
	}
	return runs[0], nil
}

// tellWaiting hands the runs newly held back to tellLoop, after their
// transaction committed; those that do not fit are told on a later pass.
func (q *Queue) tellWaiting(ctx context.Context, held []CappedRun) {
	for _, c := range held {
		select {
		case q.sched.tell <- c:
		default:
			q.untold(ctx, c)
		}
	}
}

// tellLoop calls Options.Capped for each capped run until ctx ends.
func (q *Queue) tellLoop(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	for {
		select {
		case <-ctx.Done():
			return
		case c := <-q.sched.tell:
			tctx, cancel := context.WithTimeout(ctx, tellTimeout)
			err := q.sched.waiting(tctx, c)
			cancel()
			if err != nil {
				q.log.Debug("queue: tell why a run waits", "run", c.ID, "err", err)
				q.untold(ctx, c)
			}
		}
	}
}

// untold forgets that c's run was told why it waits, so a later pass
// tells it again.
func (q *Queue) untold(ctx context.Context, c CappedRun) {
	if _, err := q.eng.pool().exec(ctx, q.sched.q.untold, c.ID, c.Reason); err != nil && ctx.Err() == nil {
		q.log.Error("queue: tell why a run waits", "run", c.ID, "err", err)
	}
}

// scanEach runs query and calls fn for each row.
func scanEach(ctx context.Context, db sqlExec, query string, fn func(rows) error, args ...any) error {
	r, err := db.query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer r.Close()
	for r.Next() {
		if err := fn(r); err != nil {
			return err
		}
	}
	return r.Err()
}

// countTx runs a SELECT COUNT(*) statement in tx.
func countTx(ctx context.Context, tx txOps, query string, args ...any) (int, error) {
	n := 0
	err := scanEach(ctx, tx, query, func(r rows) error { return r.Scan(&n) }, args...)
	if err != nil {
		return 0, fmt.Errorf("count: %w", err)
	}
	return n, nil
}
