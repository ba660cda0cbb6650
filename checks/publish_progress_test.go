package checks

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/ghapp"
	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
)

// TestPublisherLiveProgress runs a node for a minute of the Publisher's
// clock while it prints: without any engine event, the summary check shows
// the node's elapsed time and its latest output once per Throttle, cleaned
// of escapes; a secondary rate limit with Retry-After holds every update
// back until it has passed, and then the latest state, not a backlog, goes
// out; the completion comes last and no progress update follows it.
func TestPublisherLiveProgress(t *testing.T) {
	e := newGHEnv(t)
	p := load(t, ciDOT)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "stdout.log")
	opts := e.options()
	opts.Render.OutputTail = func(_, d string) string {
		if d != "stages/build" {
			return ""
		}
		b, _ := os.ReadFile(logPath)
		return string(b)
	}
	// A client per call: go-github's own memory of a secondary limit runs
	// on the real clock, while this test runs the Publisher's by hand.
	pub := e.publisher(p, freshClients{e}, opts)
	mustOK(t, pub.Queued(t.Context()))
	d := &driver{t: t, p: p, l: pub}
	d.pass("start", "build").start("build")
	waitFor(t, "the summary to go in_progress", func() bool { return e.run("kilroy/ci").Status == StatusInProgress })

	printed := func(i int) {
		f, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, "\x1b[32mstep %d\x1b[0m done\n", i)
		f.Close()
	}
	patches := func() int { return len(e.run("kilroy/ci").Patches()) }
	// tick moves the clock to the end of the ticker's window, once the
	// ticker has armed its timer for it.
	tick := func() {
		t.Helper()
		at := e.clock.Now().Add(DefaultThrottle)
		waitFor(t, "the ticker's timer", func() bool { return e.clock.armedFor(at) })
		e.clock.Advance(DefaultThrottle)
	}

	// Four windows of progress, each shown once its window ends.
	for i := 1; i <= 4; i++ {
		printed(i)
		before := patches()
		tick()
		waitFor(t, fmt.Sprintf("progress update %d", i), func() bool { return patches() > before })
		got := e.run("kilroy/ci").Patches()
		last := got[len(got)-1]
		elapsed := fmt.Sprintf("build (%ds)", 10*i)
		if last.Status != StatusInProgress || !strings.Contains(last.Title, elapsed) {
			t.Errorf("update %d: %s %q, want in_progress with %q", i, last.Status, last.Title, elapsed)
		}
		if want := fmt.Sprintf("step %d done", i); !strings.Contains(last.Summary, want) {
			t.Errorf("update %d summary lacks the output tail %q:\n%s", i, want, last.Summary)
		}
		if strings.ContainsRune(last.Summary, 0x1b) {
			t.Errorf("update %d summary carries an escape sequence", i)
		}
	}

	// A secondary rate limit on the next update: nothing more is sent
	// until Retry-After has passed, however many windows end meanwhile.
	e.fake.FailNext("PATCH", "/api/v3/repos/acme/widgets/check-runs/*", 1, 403, map[string]string{"Retry-After": "35"})
	printed(5)
	tick() // t0+50s: refused, blocked until t0+85s
	waitFor(t, "the refused update", func() bool {
		return slices.ContainsFunc(e.fake.Requests(), func(r ghapptest.Request) bool { return r.Status == 403 })
	})
	// The worker waits for the limit's end, and for nothing before it.
	waitFor(t, "the wait for Retry-After", func() bool { return e.clock.armedFor(e.clock.Now().Add(35 * time.Second)) })
	refusedAt := e.clock.Now()
	sent := patches()
	for range 3 { // t0+60s, 70s, 80s
		printed(6)
		armed := e.clock.Armed()
		tick()
		// The round the tick asked for is over once the worker armed its
		// timer for the limit's end, and the ticker its next window.
		waitFor(t, "the round during the limit", func() bool { return e.clock.Armed() >= armed+2 || patches() != sent })
		if n := patches(); n != sent {
			t.Fatalf("%d summary updates during the rate limit's Retry-After (at %v after the refusal), want none",
				n-sent, e.clock.Now().Sub(refusedAt))
		}
	}
	printed(7)
	tick() // t0+90s: past the limit
	waitFor(t, "the update after the rate limit", func() bool { return patches() > sent })
	after := e.run("kilroy/ci").Patches()
	if n := len(after) - sent; n != 1 {
		t.Errorf("%d updates once the rate limit passed, want 1 with the latest state (no backlog)", n)
	}
	if last := after[len(after)-1]; !strings.Contains(last.Summary, "step 7 done") || !strings.Contains(last.Title, "build (1m30s)") {
		t.Errorf("update after the rate limit shows %q and a tail without step 7: not the latest state", last.Title)
	}

	// The node and the run end; the ticker's next window must not send
	// anything after the completion.
	d.attempt("build", true, attractor.Outcome{Status: attractor.StatusSuccess}).checkpoint("build", sha(5)).edge("build", "vet")
	d.start("vet").attempt("vet", true, vetFails(vetFindings(1)))
	d.finish(runVetFailed)
	mustOK(t, pub.Close(t.Context()))
	e.clock.Advance(3 * DefaultThrottle)
	got := e.run("kilroy/ci").Patches()
	if last := got[len(got)-1]; last.Status != StatusCompleted {
		t.Errorf("last summary update is %s %q, want the completion", last.Status, last.Title)
	}
	for i, u := range got {
		if u.Status == StatusCompleted && i != len(got)-1 {
			t.Errorf("update %d after the completion: %s %q", len(got)-1-i, got[len(got)-1].Status, got[len(got)-1].Title)
		}
	}
	if sum := e.run("kilroy/ci"); sum.Conclusion != ConclusionFailure || strings.Contains(sum.Summary, "Running now") {
		t.Errorf("summary %s/%s still shows live progress or the wrong conclusion:\n%s", sum.Status, sum.Conclusion, sum.Summary)
	}
}

// armedFor reports whether a timer waits to fire at exactly at.
func (c *fakeClock) armedFor(at time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range c.timers {
		if t.at.Equal(at) {
			return true
		}
	}
	return false
}

// freshClients is the env's installation as a new ghapp.Client per call.
type freshClients struct{ e *ghEnv }

func (f freshClients) client(ctx context.Context) *ghapp.Client {
	return f.e.app.Installation(ctx, f.e.fake.InstallationID("acme"))
}

func (f freshClients) CreateCheckRun(ctx context.Context, repo ghapp.Repo, cr ghapp.CheckRunCreate) (int64, error) {
	return f.client(ctx).CreateCheckRun(ctx, repo, cr)
}

func (f freshClients) UpdateCheckRun(ctx context.Context, repo ghapp.Repo, id int64, u ghapp.CheckRunUpdate) error {
	return f.client(ctx).UpdateCheckRun(ctx, repo, id, u)
}

func (f freshClients) ListCheckRunsForRef(ctx context.Context, repo ghapp.Repo, sha, name string) ([]ghapp.CheckRun, error) {
	return f.client(ctx).ListCheckRunsForRef(ctx, repo, sha, name)
}
