package queue

import (
	"context"
	"fmt"
	"time"
)

// Waiting is a run waiting at a wait.human node for an answer
// (`/kilroy answer`). The run's process records it (Wait) and polls
// TakeAnswer; the event worker that decides the comment lists what waits
// (WaitingOf) and records the answer (RecordAnswer). Both go through the
// database, so the answer reaches the run whichever replica works it.
type Waiting struct {
	RunID    string
	Pipeline string
	HeadSHA  string
	Node     string
	// Question is what the runner stored with Wait (its own encoding).
	Question string
	Since    time.Time
}

// Wait records that the run waits at node with question; waiting again
// replaces the question. It returns the question recorded before, "" if
// the run did not wait there: a run resumed at its node finds what the
// process before it recorded.
func (q *Queue) Wait(ctx context.Context, runID, node, question string) (before string, err error) {
	err = q.eng.inTx(ctx, func(tx txOps) error {
		r, err := tx.query(ctx, q.q.waitingQuestion, runID, node)
		if err != nil {
			return err
		}
		before = ""
		for r.Next() {
			if err := r.Scan(&before); err != nil {
				r.Close()
				return err
			}
		}
		r.Close()
		if err := r.Err(); err != nil {
			return err
		}
		_, err = tx.exec(ctx, q.q.wait, runID, node, question, nowMillis())
		return err
	})
	if err != nil {
		return "", unavailable(fmt.Sprintf("record run %s waiting at %s", runID, node), err)
	}
	return before, nil
}

// StopWaiting records that the run no longer waits at node, and drops an
// answer it did not take: one that came as the wait ended (a timeout, a
// cancel) must not answer a later visit of the node.
func (q *Queue) StopWaiting(ctx context.Context, runID, node string) error {
	err := q.eng.inTx(ctx, func(tx txOps) error {
		if _, err := tx.exec(ctx, q.q.stopWaiting, runID, node); err != nil {
			return err
		}
		_, err := tx.exec(ctx, q.q.dropAnswer, runID, node)
		return err
	})
	if err != nil {
		return unavailable(fmt.Sprintf("record run %s no longer waiting at %s", runID, node), err)
	}
	return nil
}

// WaitingOf lists the nodes where unfinished runs of the pull request wait,
// longest waiting first.
func (q *Queue) WaitingOf(ctx context.Context, repo string, pr int) ([]Waiting, error) {
	op := fmt.Sprintf("runs of %s#%d waiting for an answer", repo, pr)
	r, err := q.eng.pool().query(ctx, q.q.waitingOfPR, repo, pr)
	if err != nil {
		return nil, unavailable(op, err)
	}
	defer r.Close()
	var out []Waiting
	for r.Next() {
		var w Waiting
		var since int64
		if err := r.Scan(&w.RunID, &w.Pipeline, &w.HeadSHA, &w.Node, &w.Question, &since); err != nil {
			return nil, unavailable(op, err)
		}
		w.Since = time.UnixMilli(since)
		out = append(out, w)
	}
	if err := r.Err(); err != nil {
		return nil, unavailable(op, err)
	}
	return out, nil
}

// RecordAnswer stores the answer choice by `by` for the run's node, in
// place of an earlier one not yet taken. It stores nothing and reports
// false when the run no longer waits there.
func (q *Queue) RecordAnswer(ctx context.Context, runID, node, choice, by string) (bool, error) {
	n, err := q.eng.pool().exec(ctx, q.q.recordAnswer, runID, node, choice, by, nowMillis(), runID, node)
	if err != nil {
		return false, unavailable(fmt.Sprintf("record answer for run %s at %s", runID, node), err)
	}
	return n > 0, nil
}

// TakeAnswer removes and returns the answer recorded for the run's node;
// ok is false while there is none.
func (q *Queue) TakeAnswer(ctx context.Context, runID, node string) (choice, by string, ok bool, err error) {
	op := fmt.Sprintf("take answer for run %s at %s", runID, node)
	r, err := q.eng.pool().query(ctx, q.q.takeAnswer, runID, node)
	if err != nil {
		return "", "", false, unavailable(op, err)
	}
	defer r.Close()
	// At most one row (the key); read to the end so pgx reports errors.
	for r.Next() {
		if err := r.Scan(&choice, &by); err != nil {
			return "", "", false, unavailable(op, err)
		}
		ok = true
	}
	if err := r.Err(); err != nil {
		return "", "", false, unavailable(op, err)
	}
	return choice, by, ok, nil
}
