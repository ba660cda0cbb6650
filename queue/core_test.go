package queue

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/riverqueue/river"
)

func TestCoreSQLite(t *testing.T) {
	testCore(t, sqliteOpener(t.TempDir()))
}

// testCore is the contract both drivers must meet: durable delivery dedupe,
// coalescing, supersede of a running run, the SHA→PR mapping, and re-runs
// of a finished SHA.
func testCore(t *testing.T, open opener) {
	ctx := context.Background()
	var dl deliveries
	q := open(t)

	first := dl.next()
	res := enqueue(t, q, first, args(1, "aaa", "ci"))
	if res.Duplicate || len(res.Jobs) != 1 || res.Jobs[0].Duplicate {
		t.Fatalf("first enqueue: %+v", res)
	}
	runA := res.Jobs[0]

	if got := enqueue(t, q, first, args(1, "aaa", "ci")); !got.Duplicate || len(got.Jobs) != 0 {
		t.Fatalf("redelivery: got %+v, want Duplicate and no jobs", got)
	}
	same := enqueue(t, q, dl.next(), args(1, "aaa", "ci"))
	if diff := cmp.Diff(same.Jobs, []Enqueued{{RunID: runA.RunID, JobID: runA.JobID, Duplicate: true}}); diff != "" {
		t.Fatalf("coalesced job (-got +want):\n%s", diff)
	}

	// Dedupe is durable: a new process still knows the delivery.
	_ = q.Close()
	q = open(t)
	if got := enqueue(t, q, first, args(1, "aaa", "ci")); !got.Duplicate {
		t.Fatalf("redelivery after reopen: got %+v, want Duplicate", got)
	}
	if n := countRows(t, q, `SELECT count(*) FROM river_job`); n != 1 {
		t.Fatalf("river_job rows = %d, want 1", n)
	}

	started := make(chan RunJob, 1)
	causes := make(chan error, 1)
	ev := events(q)
	startQueue(t, q, func(ctx context.Context, job RunJob) error {
		if job.HeadSHA != "aaa" {
			return nil
		}
		started <- job
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return ctx.Err()
	})
	if got := recv(t, started, "run aaa to start"); got.RunID != runA.RunID {
		t.Fatalf("started run %s, want %s", got.RunID, runA.RunID)
	}

	res = enqueue(t, q, dl.next(), args(1, "bbb", "ci"))
	runB := res.Jobs[0]
	if len(res.Superseded) != 1 || res.Superseded[0].ID != runA.RunID ||
		res.Superseded[0].By != "bbb" || res.Superseded[0].State != stateRunning {
		t.Fatalf("superseded = %+v, want run %s (running) by bbb", res.Superseded, runA.RunID)
	}
	var ce *CancelledError
	if cause := recv(t, causes, "run aaa's context to be cancelled"); !errors.As(cause, &ce) ||
		*ce != (CancelledError{RunID: runA.RunID, SupersededBy: "bbb"}) {
		t.Fatalf("cause = %v, want *CancelledError superseded by bbb", cause)
	}
	waitJobs(t, ev, map[int64]river.EventKind{
		runA.JobID: river.EventKindJobCancelled,
		runB.JobID: river.EventKindJobCompleted,
	})
	if got := mustRun(t, q, runA.RunID); got.State != stateSuperseded || got.SupersededBy != "bbb" || got.Owner != "" {
		t.Errorf("run aaa = %+v, want superseded by bbb and released", got)
	}
	if got := mustRun(t, q, runB.RunID); got.State != stateDone {
		t.Errorf("run bbb state = %s, want done", got.State)
	}

	if pr, ok, err := q.LookupPRBySHA(ctx, "octo/widgets", "bbb"); err != nil || !ok || pr != 1 {
		t.Errorf("LookupPRBySHA(bbb) = %d, %v, %v; want 1, true", pr, ok, err)
	}

	// A finished SHA can run again: completed jobs do not count as duplicates.
	rerun := args(1, "bbb", "ci")
	rerun.Trigger = TriggerRerun
	res = enqueue(t, q, dl.next(), rerun)
	if res.Jobs[0].Duplicate || res.Jobs[0].RunID == runB.RunID {
		t.Fatalf("re-run of a finished SHA coalesced: %+v", res.Jobs[0])
	}
	waitJobs(t, ev, map[int64]river.EventKind{res.Jobs[0].JobID: river.EventKindJobCompleted})
}
