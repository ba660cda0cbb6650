package checks

import (
	"context"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// TestPublisherAdoptWithoutGraph: a run stopped while queued is completed
// by a Publisher made without its pipeline (the host never loaded it);
// every check created at enqueue time, verify checks included, must still
// end completed, and no check is created twice.
func TestPublisherAdoptWithoutGraph(t *testing.T) {
	e := newGHEnv(t)
	first := e.publisher(load(t, ciDOT), nil, e.options())
	mustOK(t, first.Queued(t.Context()))
	first.worker.stop(t.Context())
	if n := len(e.runs()); n != 3 {
		t.Fatalf("%d check runs after Queued, want 3", n)
	}

	later := NewPublisher(e.client, e.repo, nil, RunInfo{Pipeline: "ci", RunID: "r1", HeadSHA: e.sha}, e.options())
	mustOK(t, later.Adopt(t.Context()))
	mustOK(t, later.Cancel(t.Context(), "superseded by 2b3c4d5"))

	runs := e.runs()
	if len(runs) != 3 {
		t.Fatalf("%d check runs after the cancel, want the 3 from before", len(runs))
	}
	for _, r := range runs {
		if r.Status != StatusCompleted || r.Conclusion != ConclusionCancelled {
			t.Errorf("%s: %s/%s, want completed/cancelled", r.Name, r.Status, r.Conclusion)
		}
		if !strings.Contains(r.Title+r.Summary, "superseded by 2b3c4d5") {
			t.Errorf("%s does not say why:\n%s\n%s", r.Name, r.Title, r.Summary)
		}
	}
}

// TestPublisherFailWithoutGraph: a run that fails before its pipeline was
// loaded completes the verify checks queued at enqueue time. Nothing says
// what kind of node they were (Seed does not either), so their text
// leaves the kind out rather than show it empty.
func TestPublisherFailWithoutGraph(t *testing.T) {
	e := newGHEnv(t)
	first := NewPublisher(e.client, e.repo, load(t, ciDOT), RunInfo{RunID: "r1", HeadSHA: e.sha}, e.options())
	mustOK(t, first.Queued(t.Context()))
	mustOK(t, first.Release(t.Context()))

	later := NewPublisher(e.client, e.repo, nil, RunInfo{Pipeline: "ci", RunID: "r1", HeadSHA: e.sha}, e.options())
	mustOK(t, later.Adopt(t.Context()))
	mustOK(t, later.Fail(t.Context(), "internal error: setting up the work tree"))
	mustOK(t, later.Close(t.Context()))

	for _, id := range []string{"vet", "artifacts"} {
		r := e.run("kilroy/ci/" + id)
		if r.Status != StatusCompleted {
			t.Errorf("%s: %s, want completed", r.Name, r.Status)
		}
		if want := "Node `" + id + "` of pipeline `ci`"; !strings.Contains(r.Summary, want) || strings.Contains(r.Summary, "()") {
			t.Errorf("%s summary lacks %q or shows an empty kind:\n%s", r.Name, want, r.Summary)
		}
	}
}

// TestPublisherAdoptIgnoresOtherRuns: checks of another run, or named for
// another pipeline, are never taken over.
func TestPublisherAdoptIgnoresOtherRuns(t *testing.T) {
	e := newGHEnv(t)
	other := NewPublisher(e.client, e.repo, load(t, ciDOT), RunInfo{RunID: "r2", HeadSHA: e.sha}, e.options())
	mustOK(t, other.Queued(t.Context()))
	other.worker.stop(t.Context())

	pub := NewPublisher(e.client, e.repo, nil, RunInfo{Pipeline: "ci", RunID: "r1", HeadSHA: e.sha}, e.options())
	mustOK(t, pub.Adopt(t.Context()))
	mustOK(t, pub.Fail(t.Context(), "could not fetch"))

	var queued, failed int
	for _, r := range e.runs() {
		switch {
		case strings.HasPrefix(r.ExternalID, "r2") && r.Status == StatusQueued:
			queued++
		case r.ExternalID == "r1" && r.Conclusion == ConclusionFailure:
			failed++
		default:
			t.Errorf("unexpected check run %s (%s) %s/%s", r.Name, r.ExternalID, r.Status, r.Conclusion)
		}
	}
	if queued != 3 || failed != 1 {
		t.Errorf("r2 checks still queued = %d, r1 summary failed = %d; want 3 and 1", queued, failed)
	}
}

// TestSummaryNotes: the host's notes appear in the summary check, escaped
// like any other free text.
func TestSummaryNotes(t *testing.T) {
	note := "This pull request changes .kilroy/ci.dot; this run used the base branch's pipelines | not the PR's."
	rec := NewRecorder(load(t, ciDOT), RunInfo{RunID: "r1", HeadSHA: "abc", Notes: []string{note}})
	_, summary, _ := Summary(rec.View(), RenderOptions{})
	if !strings.Contains(summary, "**Note:**") || !strings.Contains(summary, `base branch's pipelines \| not the PR's`) {
		t.Errorf("summary lacks the note:\n%s", summary)
	}

	e := newGHEnv(t)
	pub := NewPublisher(e.client, e.repo, load(t, ciDOT),
		RunInfo{RunID: "r1", HeadSHA: e.sha, Notes: []string{note}}, e.options())
	mustOK(t, pub.Queued(t.Context()))
	mustOK(t, pub.Close(t.Context()))
	if s := e.run("kilroy/ci").Summary; !strings.Contains(s, "base branch's pipelines") {
		t.Errorf("kilroy/ci summary lacks the note:\n%s", s)
	}
}

// TestMaxAnnotationsOption: the operator's cap limits the annotations of
// a verify check, and the overflow is counted in its text.
func TestMaxAnnotationsOption(t *testing.T) {
	for _, tt := range []struct{ max, want int }{{0, 120}, {30, 30}, {MaxAnnotations + 1, 120}} {
		e := newGHEnv(t)
		opts := e.options()
		opts.Render.MaxAnnotations = tt.max
		p := load(t, ciDOT)
		pub := e.publisher(p, nil, opts)
		mustOK(t, pub.Queued(t.Context()))
		d := &driver{t: t, p: p, l: pub}
		d.pass("start", "build").start("vet").attempt("vet", true, vetFails(vetFindings(120)))
		d.finish(runVetFailed)
		mustOK(t, pub.Close(context.Background()))
		vet := e.run("kilroy/ci/vet")
		if len(vet.Annotations) != tt.want {
			t.Errorf("max %d: %d annotations, want %d", tt.max, len(vet.Annotations), tt.want)
		}
		if omitted := 120 - tt.want; omitted > 0 && !strings.Contains(vet.Text, "more findings not shown") {
			t.Errorf("max %d: text does not count the %d left out:\n%s", tt.max, omitted, vet.Text)
		}
	}
}

// TestPublisherRelease: a Publisher that only queued the checks stops its
// background sending without completing them, and the run's own
// Publisher takes them over.
func TestPublisherRelease(t *testing.T) {
	e := newGHEnv(t)
	p := load(t, ciDOT)
	queued := NewPublisher(e.client, e.repo, p, RunInfo{RunID: "r1", HeadSHA: e.sha}, e.options())
	mustOK(t, queued.Queued(t.Context()))
	mustOK(t, queued.Release(t.Context()))
	select {
	case <-queued.worker.done:
	default:
		t.Fatal("the worker still runs after Release")
	}
	for _, r := range e.runs() {
		if r.Status != StatusQueued {
			t.Errorf("%s is %s after Release, want queued", r.Name, r.Status)
		}
	}

	run := e.publisher(p, nil, e.options())
	mustOK(t, run.Adopt(t.Context()))
	(&driver{t: t, p: p, l: run}).pass("start", "build").pass("build", "vet").pass("vet", "artifacts").
		pass("artifacts", "done").pass("done", "").finish(runPassed)
	mustOK(t, run.Close(t.Context()))
	if n := len(e.runs()); n != 3 {
		t.Errorf("%d check runs, want 3", n)
	}
	for _, r := range e.runs() {
		if r.Conclusion != ConclusionSuccess {
			t.Errorf("%s: %s/%s, want completed/success", r.Name, r.Status, r.Conclusion)
		}
	}
}

// TestPublisherCancelAfterEngineReported: the engine reports the
// cancelled attempt and the run before the host cancels with its reason;
// the verify check still says why the run was cancelled.
func TestPublisherCancelAfterEngineReported(t *testing.T) {
	e := newGHEnv(t)
	p := load(t, ciDOT)
	pub := e.publisher(p, nil, e.options())
	mustOK(t, pub.Queued(t.Context()))
	d := &driver{t: t, p: p, l: pub}
	d.pass("start", "build").pass("build", "vet").start("vet")
	d.attempt("vet", true, attractor.Outcome{Status: attractor.StatusFail, FailureClass: attractor.ClassCanceled,
		FailureReason: "verify command was canceled"})
	d.finish(&attractor.RunResult{RunID: "r1", Status: attractor.StatusFail, FailureClass: attractor.ClassCanceled,
		FailureReason: "superseded by abc1234"})
	mustOK(t, pub.Cancel(t.Context(), "superseded by abc1234"))
	vet := e.run("kilroy/ci/vet")
	if vet.Conclusion != ConclusionCancelled || !strings.Contains(vet.Title, "superseded by abc1234") {
		t.Errorf("kilroy/ci/vet: %s %q, want cancelled saying superseded by abc1234", vet.Conclusion, vet.Title)
	}
}
