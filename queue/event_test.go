package queue

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/riverqueue/river"
)

// TestEventJobs: an accepted delivery becomes one event job in the same
// transaction as its dedupe; the event handler gets it on its own queue and
// enqueues runs with EnqueueRuns, which coalesce and supersede like
// EnqueueDelivery's.
func TestEventJobs(t *testing.T) {
	q := sqliteOpener(t.TempDir())(t)
	ctx := context.Background()
	d := Delivery{ID: "d-1", Event: "pull_request", Heads: []PRHead{{Repo: "octo/widgets", PR: 7, HeadSHA: "aaa"}}}
	payload := json.RawMessage(`{"kind":"pull_request"}`)
	first, err := q.EnqueueEvent(ctx, d, EventArgs{Event: "pull_request", Payload: payload})
	if err != nil || first.Duplicate {
		t.Fatalf("EnqueueEvent = %+v, %v; want a new job", first, err)
	}
	again, err := q.EnqueueEvent(ctx, d, EventArgs{Event: "pull_request", Payload: payload})
	if err != nil || !again.Duplicate {
		t.Fatalf("redelivered EnqueueEvent = %+v, %v; want Duplicate", again, err)
	}
	if pr, ok, err := q.LookupPRBySHA(ctx, "octo/widgets", "aaa"); err != nil || !ok || pr != 7 {
		t.Errorf("LookupPRBySHA(aaa) = %d, %v, %v; want 7 from the delivery's heads", pr, ok, err)
	}

	evJobs := make(chan EventJob, 2)
	runs := make(chan RunJob, 4)
	ev := events(q)
	if err := q.StartHandlers(ctx, Handlers{
		Run: func(_ context.Context, job RunJob) error { runs <- job; return nil },
		Event: func(ctx context.Context, job EventJob) error {
			evJobs <- job
			_, err := q.EnqueueRuns(ctx, nil, []RunArgs{args(7, "aaa", "ci"), args(7, "aaa", "ci")})
			return err
		},
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Stop(context.Background()) })
	got := recv(t, evJobs, "the event job")
	if got.DeliveryID != "d-1" || string(got.Payload) != string(payload) || got.JobID == 0 {
		t.Fatalf("event job = %+v, want delivery d-1 with its payload", got)
	}
	run := recv(t, runs, "the run the event enqueued")
	if run.HeadSHA != "aaa" || run.Pipeline != "ci" {
		t.Fatalf("run = %+v, want aaa/ci", run)
	}
	waitJobs(t, ev, map[int64]river.EventKind{got.JobID: river.EventKindJobCompleted})
	if n := countRows(t, q, `SELECT count(*) FROM runs`); n != 1 {
		t.Errorf("runs = %d, want 1 (the duplicate coalesced)", n)
	}
}

func TestEnqueueRunsSupersedes(t *testing.T) {
	q := sqliteOpener(t.TempDir())(t)
	ctx := context.Background()
	a, err := q.EnqueueRuns(ctx, nil, []RunArgs{args(3, "aaa", "ci")})
	if err != nil {
		t.Fatal(err)
	}
	heads := []PRHead{{Repo: "octo/widgets", PR: 3, HeadSHA: "ccc"}}
	b, err := q.EnqueueRuns(ctx, heads, []RunArgs{args(3, "bbb", "ci")})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Superseded) != 1 || b.Superseded[0].ID != a.Jobs[0].RunID || b.Superseded[0].By != "bbb" {
		t.Fatalf("superseded = %+v, want run %s by bbb", b.Superseded, a.Jobs[0].RunID)
	}
	if pr, ok, _ := q.LookupPRBySHA(ctx, "octo/widgets", "ccc"); !ok || pr != 3 {
		t.Errorf("head ccc not recorded: %d, %v", pr, ok)
	}
	if _, err := q.EnqueueRuns(ctx, nil, []RunArgs{{Repo: "octo/widgets"}}); err == nil {
		t.Error("EnqueueRuns accepted invalid args")
	}
}

// TestCancelBy: who cancelled is recorded and reaches a running handler;
// an empty pipeline cancels every pipeline of the pull request.
func TestCancelBy(t *testing.T) {
	q := sqliteOpener(t.TempDir())(t)
	ctx := context.Background()
	started := make(chan RunJob, 1)
	causes := make(chan error, 1)
	startQueue(t, q, func(ctx context.Context, job RunJob) error {
		if job.Pipeline != "ci" {
			return nil
		}
		started <- job
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return ctx.Err()
	})
	res, err := q.EnqueueRuns(ctx, nil, []RunArgs{args(5, "aaa", "ci")})
	if err != nil {
		t.Fatal(err)
	}
	recv(t, started, "run ci to start")
	runs, err := q.CancelBy(ctx, "octo/widgets", 5, "", "@octocat")
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].ID != res.Jobs[0].RunID {
		t.Fatalf("CancelBy = %+v, want run %s", runs, res.Jobs[0].RunID)
	}
	var ce *CancelledError
	cause := recv(t, causes, "the cancelled handler")
	if !errors.As(cause, &ce) || *ce != (CancelledError{RunID: res.Jobs[0].RunID, CancelledBy: "@octocat"}) {
		t.Fatalf("cause = %#v, want cancelled by @octocat", cause)
	}
	if ce.Error() != "cancelled by @octocat" {
		t.Errorf("Error() = %q", ce.Error())
	}
}
