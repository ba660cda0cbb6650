package queue

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// optsOpener opens the queue under test with options of the test's own on
// a fresh database of the driver.
type optsOpener func(t testing.TB, o Options) *Queue

func sqliteOptsOpener(dir string) optsOpener {
	return func(t testing.TB, o Options) *Queue {
		t.Helper()
		o.DataDir, o.Logger = dir, testLogger(t)
		return openWith(t, o)
	}
}

func openWith(t testing.TB, o Options) *Queue {
	t.Helper()
	q, err := Open(context.Background(), o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = q.Close() })
	return q
}

func TestSchedSQLite(t *testing.T) {
	t.Run("fair", func(t *testing.T) { testSchedFair(t, sqliteOptsOpener(t.TempDir())) })
	t.Run("caps", func(t *testing.T) { testSchedCaps(t, sqliteOptsOpener(t.TempDir())) })
}

// gatedRuns is a run handler that reports each start and holds the run
// until the test releases it.
type gatedRuns struct {
	started chan RunJob
	mu      sync.Mutex
	release map[string]chan struct{}
}

func newGatedRuns() *gatedRuns {
	return &gatedRuns{started: make(chan RunJob, 100), release: map[string]chan struct{}{}}
}

func (g *gatedRuns) gate(runID string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	ch, ok := g.release[runID]
	if !ok {
		ch = make(chan struct{})
		g.release[runID] = ch
	}
	return ch
}

func (g *gatedRuns) handle(ctx context.Context, job RunJob) error {
	g.started <- job
	select {
	case <-g.gate(job.RunID):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gatedRuns) finish(runID string) { close(g.gate(runID)) }

// tenantArgs is a run of pr in repo of installation inst.
func tenantArgs(inst int64, repo string, pr int) RunArgs {
	a := args(pr, fmt.Sprintf("%040d", pr), "ci")
	a.InstallationID, a.Repo = inst, repo
	return a
}

// testSchedFair: with one worker, ten queued runs of one installation and
// then one of another, the other installation's run is the second to
// start, and the first installation's runs go oldest first.
func testSchedFair(t *testing.T, open optsOpener) {
	q := open(t, Options{Workers: 1})
	var dl deliveries
	var ids []string
	for pr := 1; pr <= 10; pr++ {
		ids = append(ids, enqueue(t, q, dl.next(), tenantArgs(1, "big/repo", pr)).Jobs[0].RunID)
	}
	other := enqueue(t, q, dl.next(), tenantArgs(2, "small/repo", 1)).Jobs[0].RunID
	want := append([]string{ids[0], other}, ids[1:]...)

	g := newGatedRuns()
	startQueue(t, q, g.handle)
	var got []string
	for range want {
		job := recv(t, g.started, "the next run to start")
		got = append(got, job.RunID)
		g.finish(job.RunID)
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("start order (-got +want):\n%s", diff)
	}
}

// testSchedCaps: with a cap of one run per repository and two workers,
// the second run of a repository waits (queued, reported once) while
// another repository's run takes the free worker, and starts when the
// first one ends.
func testSchedCaps(t *testing.T, open optsOpener) {
	capped := make(chan CappedRun, 10)
	q := open(t, Options{Workers: 2, Caps: Caps{PerRepository: 1},
		Capped: func(_ context.Context, c CappedRun) error { capped <- c; return nil }})
	var dl deliveries
	first := enqueue(t, q, dl.next(), tenantArgs(1, "octo/widgets", 1)).Jobs[0].RunID
	second := enqueue(t, q, dl.next(), tenantArgs(1, "octo/widgets", 2)).Jobs[0].RunID

	g := newGatedRuns()
	startQueue(t, q, g.handle)
	if job := recv(t, g.started, "the first run to start"); job.RunID != first {
		t.Fatalf("started %s, want the first run %s", job.RunID, first)
	}
	c := recv(t, capped, "the second run to be reported capped")
	if c.ID != second || c.InstallationID != 1 || !strings.Contains(c.Reason, "limits.max_runs_per_repository") {
		t.Fatalf("capped = %+v, want run %s of installation 1 waiting for the repository cap", c, second)
	}
	other := enqueue(t, q, dl.next(), tenantArgs(1, "octo/gadgets", 1)).Jobs[0].RunID
	if job := recv(t, g.started, "the other repository's run to start"); job.RunID != other {
		t.Fatalf("started %s, want the other repository's run %s", job.RunID, other)
	}
	if got := mustRun(t, q, second); got.State != stateQueued {
		t.Fatalf("second run is %s, want queued behind the cap", got.State)
	}
	g.finish(other)
	g.finish(first)
	if job := recv(t, g.started, "the second run to start"); job.RunID != second {
		t.Fatalf("started %s, want the second run %s", job.RunID, second)
	}
	g.finish(second)
	select {
	case c := <-capped:
		t.Errorf("capped reported again: %+v", c)
	default:
	}
}

// TestSchedCappedToldAgain: a Capped hook that fails (the run's check
// does not exist yet) hears of the run again, and not after it succeeds.
func TestSchedCappedToldAgain(t *testing.T) {
	calls := make(chan CappedRun, 10)
	var n atomic.Int32
	q := sqliteOptsOpener(t.TempDir())(t, Options{Workers: 2, Caps: Caps{PerRepository: 1},
		Capped: func(_ context.Context, c CappedRun) error {
			calls <- c
			if n.Add(1) == 1 {
				return fmt.Errorf("no check yet")
			}
			return nil
		}})
	var dl deliveries
	first := enqueue(t, q, dl.next(), tenantArgs(1, "octo/widgets", 1)).Jobs[0].RunID
	second := enqueue(t, q, dl.next(), tenantArgs(1, "octo/widgets", 2)).Jobs[0].RunID
	g := newGatedRuns()
	startQueue(t, q, g.handle)
	recv(t, g.started, "the first run to start")
	for i := range 2 {
		if c := recv(t, calls, "the hook to hear of the second run"); c.ID != second {
			t.Fatalf("call %d: capped run %s, want %s", i+1, c.ID, second)
		}
	}
	g.finish(first)
	recv(t, g.started, "the second run to start")
	g.finish(second)
	if n := len(calls); n != 0 {
		t.Errorf("the hook heard of %d more runs after it succeeded", n)
	}
}
