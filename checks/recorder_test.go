package checks

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kilroy-bot/kilroy-bot/attractor"
)

func TestRecorderStatesWhileRunning(t *testing.T) {
	s := newScript(t, ciDOT, RunInfo{Pipeline: "ci", RunID: "r1", HeadSHA: sha(1)})
	if v := s.r.View(); v.Status != RunPending || v.Node("vet").State != StatePending {
		t.Fatalf("fresh view: run %s, vet %s", v.Status, v.Node("vet").State)
	}
	s.pass("start", sha(2), "build", 0).start("build")
	v := s.r.View()
	if v.Status != RunRunning || v.Node("build").State != StateRunning {
		t.Errorf("run %s, build %s; want running, running", v.Status, v.Node("build").State)
	}
	s.attempt("build", false, attractor.Outcome{Status: attractor.StatusRetry, FailureReason: "flaky"}, time.Second)
	v = s.r.View()
	if n := v.Node("build"); n.State != StateRetrying || n.Attempts != 1 || n.Duration != time.Second {
		t.Errorf("build %s after %d attempts (%s); want retrying after 1 (1s)", n.State, n.Attempts, n.Duration)
	}
	if title, _, _ := Summary(v, RenderOptions{}); title != "running build · 1 of 5 nodes passed" {
		t.Errorf("title %q", title)
	}
	if rep := VerifyCheck(v, "vet", RenderOptions{}); rep.Status != StatusQueued || rep.Conclusion != "" {
		t.Errorf("vet check %s/%s before it ran; want queued", rep.Status, rep.Conclusion)
	}
}

func TestRecorderSnapshotIsStable(t *testing.T) {
	s := newScript(t, ciDOT, RunInfo{})
	s.start("start")
	before := s.r.View()
	s.attempt("start", true, attractor.Outcome{Status: attractor.StatusSuccess}, time.Second)
	if before.Node("start").State != StateRunning {
		t.Error("a snapshot changed after later events")
	}
}

func TestRecorderJumpsAndLoops(t *testing.T) {
	const src = `digraph loop {
  start [shape=Mdiamond]
  code [shape=box, prompt="write it"]
  check [shape=octagon, command="make check", retry_target="code"]
  done [shape=Msquare]
  start -> code -> check -> done
}
`
	s := newScript(t, src, RunInfo{})
	fail := attractor.Outcome{Status: attractor.StatusFail, FailureReason: "make check exited with status 2"}
	s.pass("start", sha(1), "code", 0).pass("code", sha(2), "check", time.Second).
		start("check").attempt("check", true, fail, time.Second)
	s.must(s.r.EdgeSelected(context.Background(), attractor.EdgeSelected{From: "check", To: "code", Method: attractor.ByRetryTarget}))
	s.pass("code", sha(3), "check", time.Second).pass("check", sha(4), "done", time.Second).pass("done", sha(5), "", 0)
	v := s.finish(&attractor.RunResult{Status: attractor.StatusSuccess})

	code := v.Node("code")
	if code.Visits != 2 || code.Attempts != 2 || code.Duration != 2*time.Second || code.CheckpointSHA != sha(3) {
		t.Errorf("code: %d visits, %d attempts, %s, checkpoint %s", code.Visits, code.Attempts, code.Duration, code.CheckpointSHA)
	}
	if check := v.Node("check"); check.State != StateSuccess || check.Outcome.FailureReason != "" {
		t.Errorf("check ended %s with reason %q; the last visit counts", check.State, check.Outcome.FailureReason)
	}
	want := []EdgeView{
		{From: "start", To: "code", Taken: 1},
		{From: "code", To: "check", Taken: 2},
		{From: "check", To: "done", Taken: 1},
		{From: "check", To: "code", Jump: attractor.ByRetryTarget, Taken: 1},
	}
	if diff := cmp.Diff(v.Edges, want); diff != "" {
		t.Errorf("edges (-got +want):\n%s", diff)
	}
	_, summary, _ := Summary(v, RenderOptions{})
	if want := `n2 -.->|"retry target"| n1`; !strings.Contains(summary, want) {
		t.Errorf("summary lacks the dotted jump %s", want)
	}
}

func TestRecorderHandlerSkip(t *testing.T) {
	s := newScript(t, ciDOT, RunInfo{})
	s.pass("start", sha(1), "build", 0).start("build").
		attempt("build", true, attractor.Outcome{Status: attractor.StatusSkipped, Notes: "nothing to build"}, 0)
	n := s.r.View().Node("build")
	if n.State != StateSkipped || n.SkipReason != "nothing to build" {
		t.Errorf("build %s: %q", n.State, n.SkipReason)
	}
}

func TestRecorderCustomOutcomeIsSuccess(t *testing.T) {
	s := newScript(t, ciDOT, RunInfo{})
	s.pass("start", sha(1), "build", 0).start("build").
		attempt("build", true, attractor.Outcome{Status: "needs_dod"}, 0)
	if n := s.r.View().Node("build"); n.State != StateSuccess {
		t.Errorf("build with custom outcome needs_dod: state %s, want %s", n.State, StateSuccess)
	}
}

func TestRecorderResumeFillsCompleted(t *testing.T) {
	// Resumed after build: this recorder hears only vet.
	s := newScript(t, ciDOT, RunInfo{})
	s.pass("vet", sha(1), "artifacts", 0).pass("artifacts", sha(2), "done", 0).pass("done", sha(3), "", 0)
	v := s.finish(&attractor.RunResult{
		Status:    attractor.StatusSuccess,
		Completed: []string{"start", "build", "vet", "artifacts", "done"},
		Outcomes: map[string]attractor.Outcome{
			"start": {Status: attractor.StatusSuccess}, "build": {Status: attractor.StatusPartialSuccess},
		},
	})
	if got := []State{v.Node("start").State, v.Node("build").State}; !cmp.Equal(got, []State{StateSuccess, StatePartial}) {
		t.Errorf("states before the resume: %v", got)
	}
}

func TestRecorderFailAndCancelComplete(t *testing.T) {
	s := newScript(t, ciDOT, RunInfo{})
	s.pass("start", sha(1), "build", 0).start("build")
	s.r.Fail("internal error: checkpoint push rejected")
	v := s.r.View()
	if v.Status != RunFailed || v.Node("build").State != StateCancelled || v.Node("vet").State != StateSkipped {
		t.Fatalf("run %s, build %s, vet %s", v.Status, v.Node("build").State, v.Node("vet").State)
	}
	if got := v.Node("build").SkipReason; got != "stopped: the run failed: internal error: checkpoint push rejected" {
		t.Errorf("build reason %q", got)
	}
	// A later cancel does not rewrite how the run ended.
	s.r.Cancel("superseded by abc")
	if v := s.r.View(); v.Status != RunFailed {
		t.Errorf("cancel after the end changed the run to %s", v.Status)
	}
	for _, n := range s.r.View().Nodes {
		if st, c := NodeConclusion(v, &n); st != StatusCompleted || c == "" {
			t.Errorf("%s is %s/%q after the run ended", n.ID, st, c)
		}
	}
}

func TestRecorderCancelThenEngineReports(t *testing.T) {
	s := newScript(t, ciDOT, RunInfo{})
	s.pass("start", sha(1), "build", 0).start("build")
	s.r.Cancel("superseded by 1234567")
	s.attempt("build", true, attractor.Outcome{Status: attractor.StatusFail, FailureClass: attractor.ClassCanceled, FailureReason: "tool_command was canceled"}, time.Second)
	v := s.finish(&attractor.RunResult{Status: attractor.StatusFail, FailureClass: attractor.ClassCanceled, FailureReason: "context canceled"})
	if v.Status != RunCancelled || v.Reason != "superseded by 1234567" {
		t.Errorf("run %s: %q", v.Status, v.Reason)
	}
	if _, c := NodeConclusion(v, v.Node("vet")); c != ConclusionCancelled {
		t.Errorf("vet conclusion %q, want cancelled", c)
	}
}

// TestRecorderConcurrent renders while the engine reports; run with -race.
func TestRecorderConcurrent(t *testing.T) {
	s := newScript(t, ciDOT, RunInfo{Pipeline: "ci"})
	var wg sync.WaitGroup
	done := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
					v := s.r.View()
					Summary(v, RenderOptions{})
					VerifyCheck(v, "vet", RenderOptions{})
				}
			}
		})
	}
	for range 50 {
		s.start("build").attempt("build", false, vetFailed(), time.Millisecond)
	}
	s.attempt("build", true, attractor.Outcome{Status: attractor.StatusSuccess}, 0)
	close(done)
	wg.Wait()
	if n := s.r.View().Node("build"); n.Attempts != 51 || n.Visits != 50 {
		t.Errorf("build: %d attempts, %d visits; want 51, 50", n.Attempts, n.Visits)
	}
}
