package queue

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
)

// waitFor bounds every wait in these tests; a wait that hits it fails.
const waitFor = 30 * time.Second

func testLogger(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(slog.DiscardHandler)
}

// opener opens the queue under test again on the same database.
type opener func(t testing.TB) *Queue

func sqliteOpener(dir string) opener {
	return func(t testing.TB) *Queue {
		t.Helper()
		q, err := Open(context.Background(), Options{DataDir: dir, Workers: 4, Logger: testLogger(t)})
		if err != nil {
			t.Fatalf("Open(%s): %v", dir, err)
		}
		t.Cleanup(func() { _ = q.Close() })
		return q
	}
}

// args returns valid RunArgs for a PR head and pipeline.
func args(pr int, sha, pipeline string) RunArgs {
	return RunArgs{
		InstallationID: 42,
		Repo:           "octo/widgets",
		CloneURL:       "https://github.com/octo/widgets.git",
		PR:             pr,
		HeadSHA:        sha,
		BaseRef:        "main",
		Pipeline:       pipeline,
		Trigger:        TriggerPullRequest,
	}
}

// deliveries hands out distinct delivery ids.
type deliveries struct{ n atomic.Int64 }

func (d *deliveries) next() Delivery {
	return Delivery{ID: fmt.Sprintf("delivery-%d", d.n.Add(1)), Event: "pull_request"}
}

func enqueue(t testing.TB, q *Queue, d Delivery, jobs ...RunArgs) EnqueueResult {
	t.Helper()
	res, err := q.EnqueueDelivery(context.Background(), d, jobs)
	if err != nil {
		t.Fatalf("EnqueueDelivery(%s): %v", d.ID, err)
	}
	return res
}

// events subscribes to job outcomes; call before Start.
func events(q *Queue) <-chan *river.Event {
	ch, _ := q.eng.subscribe(river.EventKindJobCompleted, river.EventKindJobCancelled,
		river.EventKindJobFailed, river.EventKindJobSnoozed)
	return ch
}

// waitJobs waits until every job in want has had an event, failing on a
// deadline or when a job ends another way. Events of other jobs are dropped.
func waitJobs(t testing.TB, ch <-chan *river.Event, want map[int64]river.EventKind) {
	t.Helper()
	deadline := time.After(waitFor)
	for len(want) > 0 {
		select {
		case ev := <-ch:
			if ev.Job == nil {
				continue
			}
			kind, ok := want[ev.Job.ID]
			if !ok {
				continue
			}
			if ev.Kind != kind {
				t.Fatalf("job %d: event %s, want %s (errors %v)", ev.Job.ID, ev.Kind, kind, ev.Job.Errors)
			}
			delete(want, ev.Job.ID)
		case <-deadline:
			t.Fatalf("no event within %s for jobs %v", waitFor, want)
		}
	}
}

func recv[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitFor):
		t.Fatalf("timed out after %s waiting for %s", waitFor, what)
		var zero T
		return zero
	}
}

func mustRun(t testing.TB, q *Queue, runID string) Run {
	t.Helper()
	r, err := q.getRun(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustExec(t testing.TB, q *Queue, query string, args ...any) {
	t.Helper()
	if _, err := q.eng.pool().exec(context.Background(), q.d.rebind(query), args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

func countRows(t testing.TB, q *Queue, query string, args ...any) int {
	t.Helper()
	r, err := q.eng.pool().query(context.Background(), q.d.rebind(query), args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer r.Close()
	var n int
	if !r.Next() {
		t.Fatalf("%s: no row (%v)", query, r.Err())
	}
	if err := r.Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func startQueue(t testing.TB, q *Queue, h func(context.Context, RunJob) error) {
	t.Helper()
	if err := q.Start(context.Background(), h); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		_ = q.Stop(ctx)
	})
}
