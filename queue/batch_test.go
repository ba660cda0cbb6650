package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// spyEngine wraps the real engine to count the transactions that record
// deliveries (not the intake pump's), note when one has committed, and
// fail them on demand. A failing transaction runs its statements and is
// then rolled back by the real engine, like a commit that fails.
type spyEngine struct {
	engine
	fail      error
	txs       atomic.Int32
	committed atomic.Bool
	// failPumps fails this many of the other (intake pump) transactions.
	failPumps atomic.Int32
}

func (e *spyEngine) inTx(ctx context.Context, fn func(tx txOps) error) error {
	var records bool
	err := e.engine.inTx(ctx, func(tx txOps) error {
		if err := fn(&spyTx{txOps: tx, records: &records}); err != nil {
			return err
		}
		if !records {
			if e.failPumps.Add(-1) >= 0 {
				return errors.New("pump transaction fails (injected)")
			}
			return nil
		}
		e.txs.Add(1)
		return e.fail
	})
	if err == nil && records {
		e.committed.Store(true)
	}
	return err
}

// spyTx notes whether its transaction recorded deliveries.
type spyTx struct {
	txOps
	records *bool
}

func (t *spyTx) query(ctx context.Context, stmt string, args ...any) (rows, error) {
	if strings.Contains(stmt, "INSERT INTO deliveries") {
		*t.records = true
	}
	return t.txOps.query(ctx, stmt, args...)
}

// spy installs a spyEngine. Call it before the first EnqueueEvent: the
// committer reads q.eng only after receiving a delivery.
func spy(q *Queue, fail error) *spyEngine {
	s := &spyEngine{engine: q.eng, fail: fail}
	q.eng = s
	return s
}

type eventOutcome struct {
	id  string
	res EventResult
	err error
	// committed is whether the spy had seen the commit when the call
	// returned.
	committed bool
}

// enqueueBatch holds the enqueue gate while one EnqueueEvent per id is
// started, waits until all but the first are in the committer's inbox (the
// first is held by the committer, waiting for the gate), then lets them
// commit, so that they share one batch.
func enqueueBatch(t *testing.T, q *Queue, s *spyEngine, ids []string) map[int]eventOutcome {
	t.Helper()
	release, err := q.takeGate(t.Context(), "test")
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan struct {
		i int
		o eventOutcome
	}, len(ids))
	for i, id := range ids {
		go func() {
			d := Delivery{ID: id, Event: "pull_request", Heads: []PRHead{{Repo: "octo/widgets", PR: 9, HeadSHA: "sha-" + id}}}
			res, err := q.EnqueueEvent(context.Background(), d, EventArgs{Event: "pull_request",
				Payload: json.RawMessage(fmt.Sprintf(`{"id":%q}`, id))})
			out <- struct {
				i int
				o eventOutcome
			}{i, eventOutcome{id: id, res: res, err: err, committed: s.committed.Load()}}
		}()
	}
	deadline := time.Now().Add(waitFor)
	for len(q.events.requests) < len(ids)-1 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d deliveries queued", len(q.events.requests), len(ids)-1)
		}
		time.Sleep(time.Millisecond) // polling with a deadline, not synchronising
	}
	release()
	got := make(map[int]eventOutcome, len(ids))
	for range ids {
		r := recv(t, out, "an EnqueueEvent")
		got[r.i] = r.o
	}
	return got
}

// TestEnqueueEventBatch: concurrent deliveries commit in one transaction
// and each caller gets its own answer, after the commit: a delivery stored
// earlier or repeated within the batch is a duplicate, every new one gets
// its heads and, through the intake, its own event job with its own
// payload.
func TestEnqueueEventBatch(t *testing.T) {
	q := sqliteOpener(t.TempDir())(t)
	ctx := context.Background()
	old, err := q.EnqueueEvent(ctx, Delivery{ID: "old", Event: "pull_request"}, EventArgs{Event: "pull_request"})
	if err != nil || old.Duplicate {
		t.Fatalf("EnqueueEvent(old) = %+v, %v", old, err)
	}
	s := spy(q, nil)
	ids := []string{"a", "old", "b", "a", "c"}
	got := enqueueBatch(t, q, s, ids)

	if n := s.txs.Load(); n != 1 {
		t.Errorf("transactions = %d, want 1 batch", n)
	}
	fresh := map[string]bool{}
	dups := map[string]int{}
	for i := range ids {
		o := got[i]
		if o.err != nil {
			t.Fatalf("EnqueueEvent(%s): %v", o.id, o.err)
		}
		if !o.committed {
			t.Errorf("EnqueueEvent(%s) returned before the commit", o.id)
		}
		if o.res.Duplicate {
			dups[o.id]++
			continue
		}
		if fresh[o.id] {
			t.Errorf("EnqueueEvent(%s) = %+v: new twice", o.id, o.res)
		}
		fresh[o.id] = true
	}
	if diff := cmp.Diff(dups, map[string]int{"old": 1, "a": 1}); diff != "" {
		t.Errorf("duplicates (-got +want):\n%s", diff)
	}
	if len(fresh) != 3 {
		t.Fatalf("new deliveries = %v, want a, b and c", fresh)
	}
	waitIntakeEmpty(t, q)
	jobs := eventJobArgs(t, q)
	for id := range fresh {
		args, ok := jobs[id]
		if !ok {
			t.Errorf("no event job for %s", id)
		} else if string(args.Payload) != fmt.Sprintf(`{"id":%q}`, id) {
			t.Errorf("event job of %s has args %+v", id, args)
		}
		if pr, ok, err := q.LookupPRBySHA(ctx, "octo/widgets", "sha-"+id); err != nil || !ok || pr != 9 {
			t.Errorf("head of %s: %d, %v, %v; want PR 9", id, pr, ok, err)
		}
	}
	if n := countRows(t, q, `SELECT count(*) FROM river_job WHERE kind = 'kilroy.event'`); n != 4 {
		t.Errorf("event jobs = %d, want 4 (old, a, b, c)", n)
	}
}

// TestEnqueueEventBatchFails: when a batch's commit fails, every caller in
// it gets ErrUnavailable and nothing of it is stored, so GitHub's
// redelivery of each is new.
func TestEnqueueEventBatchFails(t *testing.T) {
	q := sqliteOpener(t.TempDir())(t)
	injected := errors.New("disk on fire")
	s := spy(q, injected)
	ids := []string{"a", "b", "c", "d"}
	got := enqueueBatch(t, q, s, ids)
	if n := s.txs.Load(); n != 1 {
		t.Errorf("transactions = %d, want 1 batch", n)
	}
	for i := range ids {
		if o := got[i]; !errors.Is(o.err, ErrUnavailable) || !errors.Is(o.err, injected) {
			t.Errorf("EnqueueEvent(%s) = %+v, %v; want ErrUnavailable wrapping the commit's error", o.id, o.res, o.err)
		}
	}
	if n := countRows(t, q, `SELECT count(*) FROM deliveries`); n != 0 {
		t.Errorf("deliveries = %d after a failed batch, want 0", n)
	}
	if n := countRows(t, q, `SELECT count(*) FROM intake`); n != 0 {
		t.Errorf("intake rows = %d after a failed batch, want 0", n)
	}
	s.fail = nil // no committer is running a batch: every caller has its answer
	res, err := q.EnqueueEvent(context.Background(), Delivery{ID: "a", Event: "pull_request"}, EventArgs{Event: "pull_request"})
	if err != nil || res.Duplicate {
		t.Errorf("redelivered a = %+v, %v; want a new delivery", res, err)
	}
}

// TestEnqueueEventDurable: once EnqueueEvent returns, the delivery and its
// event are in the database file, as a reopened queue sees them.
func TestEnqueueEventDurable(t *testing.T) {
	dir := t.TempDir()
	q := sqliteOpener(dir)(t)
	d := Delivery{ID: "d-durable", Event: "pull_request"}
	if _, err := q.EnqueueEvent(context.Background(), d, EventArgs{Event: "pull_request"}); err != nil {
		t.Fatal(err)
	}
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	again := sqliteOpener(dir)(t)
	if n := countRows(t, again, `SELECT count(*) FROM deliveries WHERE delivery_id = ?`, d.ID); n != 1 {
		t.Errorf("reopened: %d deliveries %s, want 1", n, d.ID)
	}
	if _, ok := eventJobArgs(t, again)[d.ID]; !ok {
		t.Errorf("reopened: no event job for %s", d.ID)
	}
	dup, err := again.EnqueueEvent(context.Background(), d, EventArgs{Event: "pull_request"})
	if err != nil || !dup.Duplicate {
		t.Errorf("redelivered after reopen = %+v, %v; want Duplicate", dup, err)
	}
}

// TestEnqueueEventClosed: a closed queue answers ErrUnavailable.
func TestEnqueueEventClosed(t *testing.T) {
	q := sqliteOpener(t.TempDir())(t)
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := q.EnqueueEvent(context.Background(), Delivery{ID: "late", Event: "ping"}, EventArgs{Event: "ping"})
	if !errors.Is(err, ErrUnavailable) {
		t.Errorf("EnqueueEvent after Close = %v, want ErrUnavailable", err)
	}
}
