package checks

import (
	"context"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
)

func TestPublisherCancel(t *testing.T) {
	e := newGHEnv(t)
	p := load(t, ciDOT)
	pub := e.publisher(p, nil, e.options())
	mustOK(t, pub.Queued(t.Context()))
	d := &driver{t: t, p: p, l: pub}
	d.pass("start", "build").pass("build", "vet").start("vet")
	mustOK(t, pub.Cancel(t.Context(), "superseded by abc1234"))

	for _, r := range e.runs() {
		if r.Status != StatusCompleted || r.Conclusion != ConclusionCancelled {
			t.Errorf("%s: %s/%s, want completed/cancelled", r.Name, r.Status, r.Conclusion)
		}
		if !strings.Contains(r.Summary+r.Title, "superseded by abc1234") {
			t.Errorf("%s does not say why:\n%s\n%s", r.Name, r.Title, r.Summary)
		}
		if len(r.Actions) != 1 || r.Actions[0].Identifier != ActionRerun {
			t.Errorf("%s actions %+v, want Re-run only", r.Name, r.Actions)
		}
	}

	// The engine then reports the cancelled attempt and run; nothing goes
	// back to in_progress, and no check run is made again.
	d.attempt("vet", true, attractor.Outcome{Status: attractor.StatusFail, FailureClass: attractor.ClassCanceled, FailureReason: "context canceled"})
	d.finish(&attractor.RunResult{RunID: "r1", Status: attractor.StatusFail, FailureClass: attractor.ClassCanceled, FailureReason: "context canceled"})
	mustOK(t, pub.Close(t.Context()))
	if sum := e.run("kilroy/ci"); sum.Conclusion != ConclusionCancelled || !strings.Contains(sum.Summary, "superseded by abc1234") {
		t.Errorf("summary after RunFinished: %s\n%s", sum.Conclusion, sum.Summary)
	}
	if len(e.runs()) != 3 {
		t.Errorf("%d check runs, want 3", len(e.runs()))
	}
}

func TestPublisherFail(t *testing.T) {
	e := newGHEnv(t)
	p := load(t, ciDOT)
	pub := e.publisher(p, nil, e.options())
	mustOK(t, pub.Queued(t.Context()))
	d := &driver{t: t, p: p, l: pub}
	d.pass("start", "build").start("build")
	mustOK(t, pub.Fail(t.Context(), "internal error: the worktree vanished"))

	sum := e.run("kilroy/ci")
	if sum.Conclusion != ConclusionFailure || !strings.Contains(sum.Summary, "the worktree vanished") {
		t.Errorf("summary: %s, want failure with the reason:\n%s", sum.Conclusion, sum.Summary)
	}
	for _, r := range e.runs() {
		if r.Status != StatusCompleted {
			t.Errorf("%s: %s, want completed", r.Name, r.Status)
		}
	}
}

// TestPublisherCloseUnfinished: a host that closes without the run having
// ended (a crash unwinding) still leaves no check open.
func TestPublisherCloseUnfinished(t *testing.T) {
	e := newGHEnv(t)
	p := load(t, ciDOT)
	pub := e.publisher(p, nil, e.options())
	mustOK(t, pub.Queued(t.Context()))
	(&driver{t: t, p: p, l: pub}).pass("start", "build").start("build")
	mustOK(t, pub.Close(t.Context()))
	for _, r := range e.runs() {
		if r.Status != StatusCompleted {
			t.Errorf("%s: %s, want completed", r.Name, r.Status)
		}
	}
	if sum := e.run("kilroy/ci"); sum.Conclusion != ConclusionFailure {
		t.Errorf("summary: %s, want failure", sum.Conclusion)
	}
}

func TestPublisherActionRequired(t *testing.T) {
	e := newGHEnv(t)
	p := load(t, ciDOT)
	pub := e.publisher(p, nil, e.options())
	const how = "This pull request comes from a fork. A collaborator with write access can start the run by commenting `/kilroy run`."
	mustOK(t, pub.ActionRequired(t.Context(), "waiting for approval", how))
	mustOK(t, pub.Close(t.Context()))

	runs := e.runs()
	if len(runs) != 1 {
		t.Fatalf("%d check runs, want only the summary", len(runs))
	}
	r := runs[0]
	if r.Name != "kilroy/ci" || r.Status != StatusCompleted || r.Conclusion != "action_required" || r.Summary != how {
		t.Errorf("summary check: %s %s/%s %q", r.Name, r.Status, r.Conclusion, r.Summary)
	}
}

// TestPublisherAdopt restarts the bot halfway through a run: the new
// Publisher takes over the check runs the first one made.
func TestPublisherAdopt(t *testing.T) {
	e := newGHEnv(t)
	p := load(t, ciDOT)
	first := e.publisher(p, nil, e.options())
	mustOK(t, first.Queued(t.Context()))
	(&driver{t: t, p: p, l: first}).pass("start", "build").pass("build", "vet").pass("vet", "artifacts")
	waitFor(t, "vet completed", func() bool { return e.run("kilroy/ci/vet").Status == StatusCompleted })
	vetRequests := len(e.run("kilroy/ci/vet").Requests)
	// The process dies: no Close, no Cancel; the worker just stops.
	first.worker.stop(t.Context())

	second := e.publisher(p, nil, e.options())
	mustOK(t, second.Adopt(t.Context()))
	if n := len(e.runs()); n != 3 {
		t.Fatalf("%d check runs after Adopt, want the 3 from before", n)
	}
	d := &driver{t: t, p: p, l: second}
	d.pass("artifacts", "done").pass("done", "")
	d.finish(runPassed)
	mustOK(t, second.Close(t.Context()))

	if n := len(e.runs()); n != 3 {
		t.Errorf("%d check runs in the end, want 3", n)
	}
	for _, r := range e.runs() {
		if r.Status != StatusCompleted || r.Conclusion != ConclusionSuccess {
			t.Errorf("%s: %s/%s, want completed/success", r.Name, r.Status, r.Conclusion)
		}
	}
	if n := len(e.run("kilroy/ci/vet").Requests); n != vetRequests {
		t.Errorf("vet had %d requests after the restart, want %d: a completed check is left alone", n, vetRequests)
	}
}

// TestPublisherRevisit runs a verify node twice through a fix loop: the
// second visit gets a new check run of the same name, so the failure's
// annotations do not linger on the pass.
func TestPublisherRevisit(t *testing.T) {
	const loopDOT = `digraph ci {
  start [shape=Mdiamond]
  vet [shape=octagon, command="go vet ./..."]
  fix [shape=parallelogram, tool_command="gofmt -w ."]
  done [shape=Msquare]
  start -> vet
  vet -> done [condition="outcome=success"]
  vet -> fix [condition="outcome!=success"]
  fix -> vet
}
`
	e := newGHEnv(t)
	p := load(t, loopDOT)
	pub := e.publisher(p, nil, e.options())
	mustOK(t, pub.Queued(t.Context()))
	d := &driver{t: t, p: p, l: pub}
	d.pass("start", "vet").start("vet").attempt("vet", true, vetFails(vetFindings(3))).edge("vet", "fix")
	d.pass("fix", "vet").pass("vet", "done").pass("done", "")
	d.finish(&attractor.RunResult{RunID: "r1", Status: attractor.StatusSuccess, Completed: []string{"start", "vet", "fix", "vet", "done"}})
	mustOK(t, pub.Close(t.Context()))

	var vets []*ghapptest.CheckRun
	for _, r := range e.runs() {
		if r.Name == "kilroy/ci/vet" {
			vets = append(vets, r)
		}
	}
	if len(vets) != 2 {
		t.Fatalf("%d vet check runs, want one per visit", len(vets))
	}
	if vets[0].Conclusion != ConclusionFailure || len(vets[0].Annotations) != 3 || vets[1].Conclusion != ConclusionSuccess || len(vets[1].Annotations) != 0 {
		t.Errorf("vet visits: %s (%d annotations), %s (%d); want failure (3), success (0)",
			vets[0].Conclusion, len(vets[0].Annotations), vets[1].Conclusion, len(vets[1].Annotations))
	}
	if vets[1].ExternalID != "r1/vet" {
		t.Errorf("second visit's external_id %q, want r1/vet", vets[1].ExternalID)
	}
}

// TestPublisherRedacts plants a secret and a token in a finding, a
// failure reason and a node's output: no request body carries them.
func TestPublisherRedacts(t *testing.T) {
	const secret = "hunter2-webhook-secret-value"
	token := "ghs_" + strings.Repeat("A1b2", 9)
	e := newGHEnv(t)
	p := load(t, ciDOT)
	opts := e.options()
	opts.Render.Redactor = NewRedactor(secret)
	opts.Render.OutputTail = func(node, dir string) string {
		return "env:\nWEBHOOK_SECRET=" + secret + "\nGITHUB_TOKEN=" + token + "\n"
	}
	pub := e.publisher(p, nil, opts)
	mustOK(t, pub.Queued(t.Context()))
	d := &driver{t: t, p: p, l: pub}
	leak := vetFindings(2)
	leak[0].Message = "token " + token + " and secret " + secret
	d.pass("start", "build").pass("build", "vet").start("vet")
	d.attempt("vet", true, attractor.Outcome{Status: attractor.StatusFail, FailureReason: "exit 1: " + secret, Findings: leak})
	d.finish(&attractor.RunResult{RunID: "r1", Status: attractor.StatusFail, FailedNode: "vet", FailureReason: "vet: " + token})
	mustOK(t, pub.Cancel(t.Context(), "superseded; "+secret))
	mustOK(t, pub.Close(t.Context()))

	redacted := false
	for _, r := range e.fake.Requests() {
		if strings.Contains(r.Body, secret) || strings.Contains(r.Body, token) {
			t.Errorf("%s %s carries a secret:\n%s", r.Method, r.Path, r.Body)
		}
		redacted = redacted || strings.Contains(r.Body, Redacted)
	}
	if !redacted {
		t.Error("no request carries " + Redacted + ": the secrets never reached the bodies, so this test proves nothing")
	}
	if vet := e.run("kilroy/ci/vet"); !strings.Contains(vet.Text, "WEBHOOK_SECRET="+Redacted) {
		t.Errorf("vet text lacks the redacted output tail:\n%s", vet.Text)
	}
	if strings.Contains(e.logs.String(), secret) || strings.Contains(e.logs.String(), token) {
		t.Error("the log carries a secret")
	}
}

// TestPublisherDetailsURL: no public URL, no details_url; the summary
// still renders.
func TestPublisherDetailsURL(t *testing.T) {
	e := newGHEnv(t)
	opts := e.options()
	opts.PublicURL = ""
	pub := e.publisher(load(t, ciDOT), nil, opts)
	mustOK(t, pub.Queued(context.Background()))
	mustOK(t, pub.Cancel(t.Context(), "test over"))
	for _, r := range e.runs() {
		if r.DetailsURL != "" {
			t.Errorf("%s details_url %q, want none", r.Name, r.DetailsURL)
		}
	}
}

// TestPublisherDetailsURLFunc: a DetailsURL function makes the details_url
// of every check (a run page link with its token), in place of PublicURL,
// and is the link the summary shows.
func TestPublisherDetailsURLFunc(t *testing.T) {
	e := newGHEnv(t)
	opts := e.options()
	want := publicURL + "/runs/r1?t=token-of-r1"
	opts.DetailsURL = func(id string) string { return publicURL + "/runs/" + id + "?t=token-of-" + id }
	pub := e.publisher(load(t, ciDOT), nil, opts)
	if got := pub.DetailsURL(); got != want {
		t.Errorf("DetailsURL() = %q, want %q", got, want)
	}
	mustOK(t, pub.Queued(context.Background()))
	mustOK(t, pub.Cancel(t.Context(), "test over"))
	runs := e.runs()
	if len(runs) == 0 {
		t.Fatal("no check runs")
	}
	for _, r := range runs {
		if r.DetailsURL != want {
			t.Errorf("%s details_url %q, want %q", r.Name, r.DetailsURL, want)
		}
	}
	if sum := e.run("kilroy/ci"); !strings.Contains(sum.Summary, want) {
		t.Errorf("kilroy/ci summary does not link %s:\n%s", want, sum.Summary)
	}
}

// TestPublisherInvalid concludes a run whose pipeline does not load: the
// summary check fails with the diagnostics on their lines, and nothing
// else is created.
func TestPublisherInvalid(t *testing.T) {
	e := newGHEnv(t)
	_, diags, err := attractor.Load(".kilroy/ci.dot", []byte("digraph ci {\n  a -> b\n}\n"))
	if err == nil || len(diags) == 0 {
		t.Fatalf("Load of an invalid pipeline: err %v, %d diagnostics; want both", err, len(diags))
	}
	anns := DiagnosticAnnotations(diags, nil)
	pub := NewPublisher(e.client, e.repo, nil, RunInfo{Pipeline: "ci", RunID: "r1", HeadSHA: e.sha}, e.options())
	mustOK(t, pub.Invalid(t.Context(), "the pipeline does not load", "`.kilroy/ci.dot` has errors.", anns))
	mustOK(t, pub.Close(t.Context()))

	runs := e.runs()
	if len(runs) != 1 {
		t.Fatalf("%d check runs, want only the summary", len(runs))
	}
	r := runs[0]
	if r.Name != "kilroy/ci" || r.Conclusion != ConclusionFailure || len(r.Annotations) != len(anns) {
		t.Errorf("summary check: %s %s with %d annotations, want kilroy/ci failure with %d", r.Name, r.Conclusion, len(r.Annotations), len(anns))
	}
	for _, a := range r.Annotations {
		if a.Path != ".kilroy/ci.dot" || a.StartLine < 1 {
			t.Errorf("annotation on %s:%d, want a line of .kilroy/ci.dot", a.Path, a.StartLine)
		}
	}
}

// TestPublisherActionRequiredAfterQueued: verify checks created before the
// run was gated complete as skipped.
func TestPublisherActionRequiredAfterQueued(t *testing.T) {
	e := newGHEnv(t)
	pub := e.publisher(load(t, ciDOT), nil, e.options())
	mustOK(t, pub.Queued(t.Context()))
	mustOK(t, pub.ActionRequired(t.Context(), "waiting for approval", "Comment `/kilroy run` to approve."))
	for _, r := range e.runs() {
		want := ConclusionSkipped
		if r.Name == "kilroy/ci" {
			want = "action_required"
		}
		if r.Status != StatusCompleted || r.Conclusion != want {
			t.Errorf("%s: %s/%s, want completed/%s", r.Name, r.Status, r.Conclusion, want)
		}
	}
}
