package queue

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// waitIntakeEmpty waits until the pump has moved every intake row.
func waitIntakeEmpty(t testing.TB, q *Queue) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for countRows(t, q, `SELECT count(*) FROM intake`) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("intake not empty after %s", waitFor)
		}
		time.Sleep(5 * time.Millisecond) // polling with a deadline, not synchronising
	}
}

// eventJobArgs reads every event job's args, by delivery id.
func eventJobArgs(t testing.TB, q *Queue) map[string]EventArgs {
	t.Helper()
	col := "json(args)" // River's SQLite driver stores JSONB
	if q.d.name == "postgres" {
		col = "args::text"
	}
	r, err := q.eng.pool().query(context.Background(), `SELECT `+col+` FROM river_job WHERE kind = 'kilroy.event'`)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := map[string]EventArgs{}
	for r.Next() {
		var raw []byte
		if err := r.Scan(&raw); err != nil {
			t.Fatal(err)
		}
		var a EventArgs
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatalf("event job args %s: %v", raw, err)
		}
		if _, twice := out[a.DeliveryID]; twice {
			t.Errorf("two event jobs for delivery %s", a.DeliveryID)
		}
		out[a.DeliveryID] = a
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestIntakeLeftByACrashBecomesJobsAtOpen: rows a process stored (and
// acknowledged) but died before pumping are event jobs once the queue is
// opened again, each exactly once.
func TestIntakeLeftByACrashBecomesJobsAtOpen(t *testing.T) {
	dir := t.TempDir()
	if err := sqliteOpener(dir)(t).Close(); err != nil { // creates the schema
		t.Fatal(err)
	}
	// What a killed process leaves: delivery rows without their jobs,
	// more than one pump batch so that Open drains in several.
	db, err := sql.Open("sqlite", sqliteDSN(filepath.Join(dir, dbFile)))
	if err != nil {
		t.Fatal(err)
	}
	n, now := pumpBatch+7, time.Now().UnixMilli()
	for i := range n {
		id := fmt.Sprintf("crashed-%d", i)
		if _, err := db.Exec(`INSERT INTO deliveries (delivery_id, event, received_at) VALUES (?, 'pull_request', ?)`, id, now); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO intake (delivery_id, event, payload, received_at) VALUES (?, 'pull_request', ?, ?)`,
			id, fmt.Sprintf(`{"n":%d}`, i), now+int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	q := sqliteOpener(dir)(t)
	jobs := eventJobArgs(t, q)
	if len(jobs) != n {
		t.Fatalf("event jobs after Open = %d, want %d", len(jobs), n)
	}
	if got := jobs["crashed-3"]; got.Event != "pull_request" || string(got.Payload) != `{"n":3}` {
		t.Errorf("job of crashed-3 = %+v", got)
	}
	if left := countRows(t, q, `SELECT count(*) FROM intake`); left != 0 {
		t.Errorf("intake rows left = %d", left)
	}
	// A redelivery of one of them is still a duplicate.
	res, err := q.EnqueueEvent(context.Background(), Delivery{ID: "crashed-3", Event: "pull_request"}, EventArgs{Event: "pull_request"})
	if err != nil || !res.Duplicate {
		t.Errorf("redelivery = %+v, %v; want Duplicate", res, err)
	}
}

// TestIntakePumpWaitsForAQuietWebhook: while deliveries keep being
// committed the pump waits, at most until the oldest is pumpMaxLag old;
// once the webhook is quiet for pumpQuiet it goes.
func TestIntakePumpWaitsForAQuietWebhook(t *testing.T) {
	base, start := time.Unix(1_700_000_000, 0), time.Now()
	p := newIntakePump()
	p.now = func() time.Time { return base.Add(time.Since(start)) }

	p.queued() // the webhook just committed; nothing older waits
	p.wait()
	if waited := time.Since(start); waited < pumpQuiet {
		t.Errorf("pump went after %s with a commit just now; want it to wait %s", waited, pumpQuiet)
	}

	// Deliveries arrive without a pause (a commit an hour from now stands
	// for that), but the oldest has waited pumpMaxLag: the pump goes.
	p.lastCommit.Store(p.now().Add(time.Hour).UnixNano())
	p.oldest.Store(p.now().Add(-pumpMaxLag).UnixNano())
	done := make(chan struct{})
	go func() { p.wait(); close(done) }()
	recv(t, done, "the pump to go for an old delivery")
}

// TestIntakePumpRetriesAFailedTransaction: when moving rows fails, the
// pump tries again by itself; it does not wait for the next delivery.
func TestIntakePumpRetriesAFailedTransaction(t *testing.T) {
	q := sqliteOpener(t.TempDir())(t)
	s := spy(q, nil)
	s.failPumps.Store(2)
	if _, err := q.EnqueueEvent(context.Background(), Delivery{ID: "lonely", Event: "ping"}, EventArgs{Event: "ping"}); err != nil {
		t.Fatal(err)
	}
	waitIntakeEmpty(t, q)
	if _, ok := eventJobArgs(t, q)["lonely"]; !ok {
		t.Error("no event job for the delivery after the pump's failures")
	}
	if left := s.failPumps.Load(); left > 0 {
		t.Errorf("%d injected failures left: the pump did not run into them", left)
	}
}
