package queue

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

func jobState(t *testing.T, q *Queue, id int64) rivertype.JobState {
	t.Helper()
	job, err := q.eng.jobGet(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return job.State
}

func TestSupersedeQueued(t *testing.T) {
	q := sqliteOpener(t.TempDir())(t)
	var dl deliveries
	a := enqueue(t, q, dl.next(), args(2, "aaa", "ci"), args(2, "aaa", "lint"), args(3, "aaa", "ci")).Jobs
	b := enqueue(t, q, dl.next(), args(2, "bbb", "ci"))

	want := []Superseded{{Run: Run{ID: a[0].RunID, Repo: "octo/widgets", PR: 2, HeadSHA: "aaa", Pipeline: "ci",
		State: stateQueued, JobID: a[0].JobID}, By: "bbb"}}
	if diff := cmp.Diff(b.Superseded, want); diff != "" {
		t.Fatalf("superseded (-got +want):\n%s", diff)
	}
	if got := jobState(t, q, a[0].JobID); got != rivertype.JobStateCancelled {
		t.Errorf("superseded job state = %s, want cancelled", got)
	}
	// Other pipelines and other PRs are untouched.
	for _, e := range a[1:] {
		if got := mustRun(t, q, e.RunID).State; got != stateQueued {
			t.Errorf("run %s state = %s, want queued", e.RunID, got)
		}
	}

	var mu sync.Mutex
	seen := map[string]int{}
	ev := events(q)
	startQueue(t, q, func(_ context.Context, job RunJob) error {
		mu.Lock()
		defer mu.Unlock()
		seen[job.RunID]++
		return nil
	})
	waitJobs(t, ev, map[int64]river.EventKind{
		b.Jobs[0].JobID: river.EventKindJobCompleted,
		a[1].JobID:      river.EventKindJobCompleted,
		a[2].JobID:      river.EventKindJobCompleted,
	})
	mu.Lock()
	defer mu.Unlock()
	if seen[a[0].RunID] != 0 {
		t.Errorf("superseded run %s was handed to the handler", a[0].RunID)
	}
}

func TestCancel(t *testing.T) {
	q := sqliteOpener(t.TempDir())(t)
	var dl deliveries
	queued := enqueue(t, q, dl.next(), args(4, "aaa", "ci")).Jobs[0]
	runs, err := q.Cancel(context.Background(), "octo/widgets", 4, "ci")
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].ID != queued.RunID || runs[0].State != stateQueued {
		t.Fatalf("Cancel = %+v, want run %s (queued)", runs, queued.RunID)
	}
	if got := jobState(t, q, queued.JobID); got != rivertype.JobStateCancelled {
		t.Errorf("cancelled queued job state = %s, want cancelled", got)
	}

	started := make(chan RunJob, 1)
	causes := make(chan error, 1)
	ev := events(q)
	startQueue(t, q, func(ctx context.Context, job RunJob) error {
		started <- job
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return ctx.Err()
	})
	running := enqueue(t, q, dl.next(), args(4, "bbb", "ci")).Jobs[0]
	recv(t, started, "run bbb to start")
	runs, err = q.Cancel(context.Background(), "octo/widgets", 4, "ci")
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].ID != running.RunID || runs[0].State != stateRunning {
		t.Fatalf("Cancel = %+v, want run %s (running)", runs, running.RunID)
	}
	var ce *CancelledError
	if cause := recv(t, causes, "cancelled handler"); !errors.As(cause, &ce) || ce.SupersededBy != "" || ce.RunID != running.RunID {
		t.Fatalf("cause = %v, want *CancelledError for %s without SupersededBy", cause, running.RunID)
	}
	waitJobs(t, ev, map[int64]river.EventKind{running.JobID: river.EventKindJobCancelled})
	if got := mustRun(t, q, running.RunID); got.State != stateCancelled || got.Owner != "" {
		t.Errorf("run = %+v, want cancelled and released", got)
	}
}

func TestHandlerRunsEachJobOnce(t *testing.T) {
	q := sqliteOpener(t.TempDir())(t)
	var dl deliveries
	want := map[int64]river.EventKind{}
	var runIDs []string
	for d := range 3 {
		var jobs []RunArgs
		for p := range 4 {
			jobs = append(jobs, args(10+d*4+p, "sha", "ci"))
		}
		for _, e := range enqueue(t, q, dl.next(), jobs...).Jobs {
			want[e.JobID] = river.EventKindJobCompleted
			runIDs = append(runIDs, e.RunID)
		}
	}
	var mu sync.Mutex
	calls := map[string]int{}
	ev := events(q)
	startQueue(t, q, func(_ context.Context, job RunJob) error {
		mu.Lock()
		defer mu.Unlock()
		calls[job.RunID]++
		return nil
	})
	waitJobs(t, ev, want)
	if err := q.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, id := range runIDs {
		if calls[id] != 1 {
			t.Errorf("run %s handled %d times, want 1", id, calls[id])
		}
		if got := mustRun(t, q, id).State; got != stateDone {
			t.Errorf("run %s state = %s, want done", id, got)
		}
	}
	if len(calls) != len(runIDs) {
		t.Errorf("handler saw %d runs, want %d", len(calls), len(runIDs))
	}
}

func TestHandlerErrorFailsRunOnce(t *testing.T) {
	q := sqliteOpener(t.TempDir())(t)
	e := enqueue(t, q, Delivery{ID: "d", Event: "pull_request"}, args(5, "aaa", "ci")).Jobs[0]
	var mu sync.Mutex
	calls := 0
	ev := events(q)
	startQueue(t, q, func(context.Context, RunJob) error {
		mu.Lock()
		defer mu.Unlock()
		calls++
		return errors.New("boom")
	})
	waitJobs(t, ev, map[int64]river.EventKind{e.JobID: river.EventKindJobFailed})
	if got := jobState(t, q, e.JobID); got != rivertype.JobStateDiscarded {
		t.Errorf("job state = %s, want discarded (no retry)", got)
	}
	if got := mustRun(t, q, e.RunID).State; got != stateFailed {
		t.Errorf("run state = %s, want failed", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 1 {
		t.Errorf("handler called %d times, want 1", calls)
	}
}

func TestStopWaitsForHandlers(t *testing.T) {
	q := sqliteOpener(t.TempDir())(t)
	e := enqueue(t, q, Delivery{ID: "d", Event: "pull_request"}, args(6, "aaa", "ci")).Jobs[0]
	started, release := make(chan struct{}), make(chan struct{})
	var returned, sawCancel bool
	startQueue(t, q, func(ctx context.Context, _ RunJob) error {
		close(started)
		<-release
		sawCancel = ctx.Err() != nil
		returned = true
		return nil
	})
	recv(t, started, "handler to start")
	stopped := make(chan error, 1)
	go func() { stopped <- q.Stop(context.Background()) }()
	close(release)
	if err := recv(t, stopped, "Stop"); err != nil {
		t.Fatal(err)
	}
	// Stop returned, so the handler must have; its writes are visible.
	if !returned || sawCancel {
		t.Fatalf("after Stop: handler returned %v, saw cancel %v; want true, false", returned, sawCancel)
	}
	if got := jobState(t, q, e.JobID); got != rivertype.JobStateCompleted {
		t.Errorf("job state = %s, want completed", got)
	}
}

// A Stop that runs out of time cancels the handler (cause ErrStopping) and
// hands the run back; the next process resumes it.
func TestStopHandsBackCutShortRuns(t *testing.T) {
	dir := t.TempDir()
	open := sqliteOpener(dir)
	q := open(t)
	e := enqueue(t, q, Delivery{ID: "d", Event: "pull_request"}, args(7, "aaa", "ci")).Jobs[0]
	started := make(chan struct{})
	causes := make(chan error, 1)
	startQueue(t, q, func(ctx context.Context, _ RunJob) error {
		close(started)
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return ctx.Err()
	})
	recv(t, started, "handler to start")
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // no grace: go straight to cancelling
	if err := q.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if cause := recv(t, causes, "handler cause"); !errors.Is(cause, ErrStopping) {
		t.Fatalf("cause = %v, want ErrStopping", cause)
	}
	if got := mustRun(t, q, e.RunID); got.State != stateQueued || got.Resumes != 1 || got.Owner != "" {
		t.Fatalf("run after Stop = %+v, want queued, released, Resumes 1", got)
	}
	_ = q.Close()

	q = open(t)
	resumed := make(chan RunJob, 1)
	ev := events(q)
	startQueue(t, q, func(_ context.Context, job RunJob) error {
		resumed <- job
		return nil
	})
	got := recv(t, resumed, "resumed run")
	if got.RunID != e.RunID || got.Resumes != 1 {
		t.Fatalf("resumed %s with Resumes %d, want %s with 1", got.RunID, got.Resumes, e.RunID)
	}
	waitJobs(t, ev, map[int64]river.EventKind{e.JobID: river.EventKindJobCompleted})
}

// crash leaves the database as a process killed mid-run would: River's job
// running, our run held by an owner that no longer exists.
func crash(t *testing.T, q *Queue, e Enqueued, heartbeat int64) {
	t.Helper()
	mustExec(t, q, `UPDATE river_job SET state = 'running', attempt = 1 WHERE id = ?`, e.JobID)
	mustExec(t, q, `UPDATE runs SET state = 'running', owner = 'dead-process', heartbeat_at = ? WHERE run_id = ?`,
		heartbeat, e.RunID)
}

func TestInterruptedRunIsResumedAtStart(t *testing.T) {
	dir := t.TempDir()
	open := sqliteOpener(dir)
	q := open(t)
	e := enqueue(t, q, Delivery{ID: "d", Event: "pull_request"}, args(8, "aaa", "ci")).Jobs[0]
	// A fresh heartbeat: with SQLite the owner is gone whatever it says.
	crash(t, q, e, nowMillis())
	_ = q.Close()

	q = open(t)
	runs, err := q.InterruptedRuns(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].ID != e.RunID || runs[0].Owner != "dead-process" {
		t.Fatalf("InterruptedRuns = %+v, want run %s of dead-process", runs, e.RunID)
	}
	resumed := make(chan RunJob, 1)
	ev := events(q)
	startQueue(t, q, func(_ context.Context, job RunJob) error {
		resumed <- job
		return nil
	})
	if got := recv(t, resumed, "resumed run"); got.RunID != e.RunID || got.Resumes != 1 {
		t.Fatalf("resumed %s with Resumes %d, want %s with 1", got.RunID, got.Resumes, e.RunID)
	}
	waitJobs(t, ev, map[int64]river.EventKind{e.JobID: river.EventKindJobCompleted})
	if runs, err := q.InterruptedRuns(context.Background()); err != nil || len(runs) != 0 {
		t.Fatalf("InterruptedRuns after resume = %+v, %v; want none", runs, err)
	}
}

// Between live processes (Postgres), only a stale heartbeat lets another
// process take a run.
func TestReclaimNeedsStaleHeartbeat(t *testing.T) {
	for _, tc := range []struct {
		name      string
		heartbeat time.Duration // age
		want      bool
	}{
		{"fresh", 0, false},
		{"stale", 2 * defaultStaleAfter, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := sqliteOpener(t.TempDir())(t)
			e := enqueue(t, q, Delivery{ID: "d", Event: "pull_request"}, args(9, "aaa", "ci")).Jobs[0]
			crash(t, q, e, time.Now().Add(-tc.heartbeat).UnixMilli())
			got, err := q.reclaim(context.Background(), false)
			if err != nil {
				t.Fatal(err)
			}
			if (len(got) == 1) != tc.want {
				t.Fatalf("reclaim took %d runs, want taken=%v", len(got), tc.want)
			}
			wantState, wantJob := stateRunning, rivertype.JobStateRunning
			if tc.want {
				wantState, wantJob = stateQueued, rivertype.JobStateAvailable
			}
			if r := mustRun(t, q, e.RunID); r.State != wantState {
				t.Errorf("run state = %s, want %s", r.State, wantState)
			}
			if s := jobState(t, q, e.JobID); s != wantJob {
				t.Errorf("job state = %s, want %s", s, wantJob)
			}
		})
	}
}

func TestUnavailable(t *testing.T) {
	t.Run("directory in place of the database", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, dbFile), 0o755); err != nil {
			t.Fatal(err)
		}
		_, err := Open(context.Background(), Options{DataDir: dir})
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("Open = %v, want ErrUnavailable", err)
		}
	})
	t.Run("data dir is a file", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "file")
		if err := os.WriteFile(file, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Open(context.Background(), Options{DataDir: file})
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("Open = %v, want ErrUnavailable", err)
		}
	})
	t.Run("closed", func(t *testing.T) {
		q := sqliteOpener(t.TempDir())(t)
		if err := q.Close(); err != nil {
			t.Fatal(err)
		}
		_, err := q.EnqueueDelivery(context.Background(), Delivery{ID: "d"}, []RunArgs{args(1, "a", "ci")})
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("EnqueueDelivery = %v, want ErrUnavailable", err)
		}
		if _, _, err := q.LookupPRBySHA(context.Background(), "octo/widgets", "a"); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("LookupPRBySHA = %v, want ErrUnavailable", err)
		}
	})
}

// Bad input is the caller's bug (a 4xx or a log line), not a 503.
func TestInvalidJobIsNotUnavailable(t *testing.T) {
	q := sqliteOpener(t.TempDir())(t)
	bad := args(1, "", "ci")
	_, err := q.EnqueueDelivery(context.Background(), Delivery{ID: "d"}, []RunArgs{bad})
	if err == nil || errors.Is(err, ErrUnavailable) {
		t.Fatalf("EnqueueDelivery(empty sha) = %v, want a non-ErrUnavailable error", err)
	}
	// Nothing was recorded: the delivery can come again once fixed.
	if res := enqueue(t, q, Delivery{ID: "d"}, args(1, "a", "ci")); res.Duplicate {
		t.Fatal("rejected delivery was recorded as seen")
	}
}

func TestLookupPRBySHA(t *testing.T) {
	q := sqliteOpener(t.TempDir())(t)
	d := Delivery{ID: "d", Event: "pull_request", Heads: []PRHead{{Repo: "fork/gated", PR: 12, HeadSHA: "f00"}}}
	enqueue(t, q, d, args(11, "abc", "ci"))
	for _, tc := range []struct {
		repo, sha string
		pr        int
		ok        bool
	}{
		{"octo/widgets", "abc", 11, true},
		{"fork/gated", "f00", 12, true},
		{"octo/widgets", "f00", 0, false},
		{"octo/widgets", "unknown", 0, false},
	} {
		pr, ok, err := q.LookupPRBySHA(context.Background(), tc.repo, tc.sha)
		if err != nil || pr != tc.pr || ok != tc.ok {
			t.Errorf("LookupPRBySHA(%s, %s) = %d, %v, %v; want %d, %v", tc.repo, tc.sha, pr, ok, err, tc.pr, tc.ok)
		}
	}
}

func TestPruneForgetsOldDeliveries(t *testing.T) {
	q := sqliteOpener(t.TempDir())(t)
	enqueue(t, q, Delivery{ID: "old", Event: "ping"})
	if err := q.prune(context.Background(), time.Now().Add(-retention)); err != nil {
		t.Fatal(err)
	}
	if res := enqueue(t, q, Delivery{ID: "old", Event: "ping"}); !res.Duplicate {
		t.Fatal("a delivery younger than the retention was forgotten")
	}
	if err := q.prune(context.Background(), time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if res := enqueue(t, q, Delivery{ID: "old", Event: "ping"}); res.Duplicate {
		t.Fatal("a delivery older than the retention is still remembered")
	}
}
