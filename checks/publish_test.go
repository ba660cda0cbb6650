package checks

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/attractor/findings"
	"github.com/kilroy-bot/kilroy-bot/ghapp"
	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
)

// vetFindings are n findings on four files, notices, warnings and errors
// interleaved so that sorting them is visible.
func vetFindings(n int) []findings.Finding {
	levels := []findings.Level{findings.LevelNotice, findings.LevelWarning, findings.LevelError}
	out := make([]findings.Finding, n)
	for i := range out {
		out[i] = findings.Finding{
			Path: fmt.Sprintf("pkg/file%d.go", i%4), Line: i + 1, Level: levels[i%3],
			Message: fmt.Sprintf("finding %d", i), Tool: findings.ToolGo,
		}
	}
	return out
}

// vetFails is a failed vet attempt reporting fs.
func vetFails(fs []findings.Finding) attractor.Outcome {
	return attractor.Outcome{Status: attractor.StatusFail, FailureClass: attractor.ClassDeterministic,
		FailureReason: "verify command exited with status 1", Findings: fs}
}

var (
	runVetFailed = &attractor.RunResult{RunID: "r1", Status: attractor.StatusFail, FailureClass: attractor.ClassDeterministic,
		FailureReason: "vet failed and no edge matches", FailedNode: "vet", Completed: []string{"start", "build", "vet"}}
	runPassed = &attractor.RunResult{RunID: "r1", Status: attractor.StatusSuccess,
		Completed: []string{"start", "build", "vet", "artifacts", "done"}}
)

func TestPublisherFailingVerifyNode(t *testing.T) {
	e := newGHEnv(t)
	p := load(t, ciDOT)
	pub := e.publisher(p, nil, e.options())
	ctx := t.Context()
	mustOK(t, pub.Queued(ctx))

	if got := len(e.runs()); got != 3 {
		t.Fatalf("Queued made %d check runs, want 3 (summary, vet, artifacts)", got)
	}
	for _, r := range e.runs() {
		if r.Status != StatusQueued || r.DetailsURL != publicURL+"/runs/r1" || len(r.Actions) != 2 {
			t.Errorf("%s after Queued: status %q, details_url %q, %d actions; want queued, %s, Re-run and Cancel",
				r.Name, r.Status, r.DetailsURL, len(r.Actions), publicURL+"/runs/r1")
		}
	}

	fs := vetFindings(120)
	d := &driver{t: t, p: p, l: pub}
	d.pass("start", "build").pass("build", "vet").start("vet").attempt("vet", true, vetFails(fs))
	d.finish(runVetFailed)
	mustOK(t, pub.Close(ctx))

	vet := e.run("kilroy/ci/vet")
	if vet.Status != StatusCompleted || vet.Conclusion != ConclusionFailure {
		t.Errorf("vet: %s/%s, want completed/failure", vet.Status, vet.Conclusion)
	}
	if got, want := requestAnnotations(t, vet), []int{50, 50, 20}; !slices.Equal(got, want) {
		t.Errorf("annotations per request: %v, want %v", got, want)
	}
	if len(vet.Annotations) != 120 {
		t.Fatalf("vet has %d annotations, want 120", len(vet.Annotations))
	}
	for i, a := range vet.Annotations {
		wantLevel := []string{LevelFailure, LevelWarning, LevelNotice}[i/40]
		if a.AnnotationLevel != wantLevel {
			t.Fatalf("annotation %d is a %s, want %s: errors first, then warnings, then notices", i, a.AnnotationLevel, wantLevel)
		}
	}
	got := map[string]string{}
	for _, a := range vet.Annotations {
		got[fmt.Sprintf("%s:%d-%d", a.Path, a.StartLine, a.EndLine)] = a.AnnotationLevel + " " + a.Message
	}
	want := map[string]string{}
	for _, f := range fs {
		want[fmt.Sprintf("%s:%d-%d", f.Path, f.Line, f.Line)] = annotationLevel(f.Level) + " " + f.Message
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("annotations by position (-got +want):\n%s", diff)
	}
	if !slices.Equal(vet.Actions, []ghapptest.Action{{Label: "Re-run", Description: "Run this pipeline again", Identifier: "rerun"}}) {
		t.Errorf("vet actions when done: %+v, want Re-run only", vet.Actions)
	}

	sum := e.run("kilroy/ci")
	if sum.Status != StatusCompleted || sum.Conclusion != ConclusionFailure {
		t.Errorf("summary: %s/%s, want completed/failure", sum.Status, sum.Conclusion)
	}
	for _, s := range []string{"| Node | Kind | Status |", "`vet`", "`artifacts`", "not on the path taken: vet failed"} {
		if !strings.Contains(sum.Summary, s) {
			t.Errorf("summary lacks %q:\n%s", s, sum.Summary)
		}
	}
	if sum.ExternalID != "r1" || vet.ExternalID != "r1/vet" {
		t.Errorf("external_id: summary %q, vet %q; want r1 and r1/vet", sum.ExternalID, vet.ExternalID)
	}
	art := e.run("kilroy/ci/artifacts")
	if art.Status != StatusCompleted || art.Conclusion != ConclusionSkipped {
		t.Errorf("artifacts: %s/%s, want completed/skipped", art.Status, art.Conclusion)
	}
	if len(e.runs()) != 3 {
		t.Errorf("%d check runs in the end, want 3", len(e.runs()))
	}
}

func TestPublisherPassingRun(t *testing.T) {
	e := newGHEnv(t)
	p := load(t, ciDOT)
	pub := e.publisher(p, nil, e.options())
	mustOK(t, pub.Queued(t.Context()))
	d := &driver{t: t, p: p, l: pub}
	d.pass("start", "build").pass("build", "vet").pass("vet", "artifacts").pass("artifacts", "done").pass("done", "")
	d.finish(runPassed)
	mustOK(t, pub.Close(t.Context()))

	for _, r := range e.runs() {
		if r.Status != StatusCompleted || r.Conclusion != ConclusionSuccess {
			t.Errorf("%s: %s/%s, want completed/success", r.Name, r.Status, r.Conclusion)
		}
		if r.StartedAt.IsZero() || r.CompletedAt.IsZero() {
			t.Errorf("%s: started %v, completed %v; want both set", r.Name, r.StartedAt, r.CompletedAt)
		}
	}
	if len(e.runs()) != 3 {
		t.Errorf("%d check runs, want 3", len(e.runs()))
	}
}

// TestPublisherThrottle sends a burst of events within one window: each
// check gets at most one in-progress update per window, the burst's last
// state goes out when the window ends although no event follows, and the
// completions go out at once.
func TestPublisherThrottle(t *testing.T) {
	e := newGHEnv(t)
	p := load(t, ciDOT)
	api := &recordingAPI{API: e.client, clock: e.clock}
	pub := e.publisher(p, api, e.options())
	mustOK(t, pub.Queued(t.Context()))
	d := &driver{t: t, p: p, l: pub}
	summaryID := e.run("kilroy/ci").ID
	summaryUpdates := func() int {
		n := 0
		for _, u := range api.Updates() {
			if u.id == summaryID {
				n++
			}
		}
		return n
	}

	d.start("start")
	waitFor(t, "the summary to go in_progress", func() bool { return summaryUpdates() == 1 })
	for range 3 {
		e.clock.Advance(time.Second)
		d.attempt("start", true, attractor.Outcome{Status: attractor.StatusSuccess}).edge("start", "build")
		d.start("build").attempt("build", false, attractor.Outcome{Status: attractor.StatusRetry, FailureReason: "flaky"})
	}
	d.attempt("build", true, attractor.Outcome{Status: attractor.StatusSuccess}).edge("build", "vet").start("vet")
	waitFor(t, "vet to go in_progress", func() bool { return e.run("kilroy/ci/vet").Status == StatusInProgress })
	if n := summaryUpdates(); n != 1 {
		t.Fatalf("%d summary updates within the first window, want 1", n)
	}

	// The window ends: the worker's timer sends the latest summary.
	waitFor(t, "the flush timer to be armed", func() bool { return e.clock.Armed() > 0 })
	e.clock.Advance(8 * time.Second)
	waitFor(t, "the trailing summary update", func() bool { return summaryUpdates() == 2 })
	if sum := e.run("kilroy/ci"); !strings.HasPrefix(sum.Title, "running vet") {
		t.Errorf("summary title after the flush: %q, want the latest state (running vet …)", sum.Title)
	}

	d.attempt("vet", true, vetFails(vetFindings(3)))
	d.finish(runVetFailed)
	waitFor(t, "the completions", func() bool {
		return e.run("kilroy/ci").Status == StatusCompleted && e.run("kilroy/ci/vet").Status == StatusCompleted
	})
	mustOK(t, pub.Close(t.Context()))

	last := map[int64]time.Time{}
	for _, u := range api.Updates() {
		if u.u.Status != StatusInProgress && u.u.Status != StatusQueued {
			continue
		}
		if prev, ok := last[u.id]; ok && u.at.Sub(prev) < DefaultThrottle {
			t.Errorf("check %d: in-progress updates at %v and %v, less than %v apart", u.id, prev, u.at, DefaultThrottle)
		}
		last[u.id] = u.at
	}
	if got, want := requestStatuses(t, e.run("kilroy/ci")), []string{"POST queued", "PATCH in_progress", "PATCH in_progress", "PATCH completed failure"}; !slices.Equal(got, want) {
		t.Errorf("summary requests: %q, want %q", got, want)
	}
	if got, want := requestStatuses(t, e.run("kilroy/ci/vet")), []string{"POST queued", "PATCH in_progress", "PATCH completed failure"}; !slices.Equal(got[:min(len(got), 3)], want) {
		t.Errorf("vet requests: %q, want %q first", got, want)
	}
}

// TestPublisherAdoptStartsAtOnce: the run's Publisher adopts the checks
// queued at enqueue time and its nodes start within a throttle window of
// the adoption. Each check goes in_progress at once, since that is a
// change of state; later progress of a check waits out the window; the
// completions wait for nothing. Rounds are run by hand at known times.
func TestPublisherAdoptStartsAtOnce(t *testing.T) {
	e := newGHEnv(t)
	p := load(t, ciDOT)
	queued := NewPublisher(e.client, e.repo, p, RunInfo{RunID: "r1", HeadSHA: e.sha}, e.options())
	mustOK(t, queued.Queued(t.Context()))
	mustOK(t, queued.Release(t.Context()))

	api := &recordingAPI{API: e.client, clock: e.clock}
	pub := e.publisher(p, api, e.options())
	t0 := e.clock.Now()
	mustOK(t, pub.Adopt(t.Context()))
	pub.worker.stop(t.Context())
	round := func() time.Time {
		t.Helper()
		next, err := pub.sync(t.Context(), false)
		mustOK(t, err)
		return next
	}
	ok := attractor.Outcome{Status: attractor.StatusSuccess}
	d := &driver{t: t, p: p, l: pub}

	d.start("start")
	round()
	d.attempt("start", true, ok).edge("start", "build").start("build")
	if next := round(); !next.Equal(t0.Add(DefaultThrottle)) {
		t.Errorf("progress of the summary held back until %v, want %v", next.Sub(t0), DefaultThrottle)
	}
	e.clock.Advance(time.Second)
	d.attempt("build", true, ok).edge("build", "vet").start("vet")
	round()
	e.clock.Advance(DefaultThrottle - time.Second)
	round()
	e.clock.Advance(time.Second)
	d.attempt("vet", true, vetFails(vetFindings(3)))
	d.finish(runVetFailed)
	round()

	want := map[string][]string{
		"kilroy/ci":           {"0s queued", "0s in_progress", "10s in_progress", "11s completed failure"},
		"kilroy/ci/vet":       {"0s queued", "1s in_progress", "11s completed failure"},
		"kilroy/ci/artifacts": {"0s queued", "11s completed skipped"},
	}
	if diff := cmp.Diff(timedStatuses(e, api, t0), want); diff != "" {
		t.Errorf("updates by check, at seconds after the adoption (-got +want):\n%s", diff)
	}
}

// timedStatuses lists the accepted updates of every check run by name:
// when, after t0, and the status and conclusion each sent.
func timedStatuses(e *ghEnv, api *recordingAPI, t0 time.Time) map[string][]string {
	names := map[int64]string{}
	for _, r := range e.runs() {
		names[r.ID] = r.Name
	}
	out := map[string][]string{}
	for _, u := range api.Updates() {
		if u.err == nil {
			s := strings.TrimSpace(u.u.Status + " " + u.u.Conclusion)
			out[names[u.id]] = append(out[names[u.id]], fmt.Sprintf("%v %s", u.at.Sub(t0), s))
		}
	}
	return out
}

// TestPublisherServerErrorOnCompletion fails the completion of vet with
// 502s beyond ghapp's own retries: the worker tries again after the
// throttle's interval, and the check ends completed with every
// annotation, none twice.
func TestPublisherServerErrorOnCompletion(t *testing.T) {
	e := newGHEnv(t)
	p := load(t, ciDOT)
	pub := e.publisher(p, nil, e.options())
	mustOK(t, pub.Queued(t.Context()))
	d := &driver{t: t, p: p, l: pub}
	d.pass("start", "build").pass("build", "vet").start("vet")
	vetPath := fmt.Sprintf("/api/v3/repos/acme/widgets/check-runs/%d", e.run("kilroy/ci/vet").ID)
	waitFor(t, "vet in progress", func() bool { return e.run("kilroy/ci/vet").Status == StatusInProgress })
	e.fake.FailNext("PATCH", vetPath, 2, 502, nil)

	d.attempt("vet", true, vetFails(vetFindings(60)))
	waitFor(t, "two 502s on vet", func() bool {
		n := 0
		for _, r := range e.fake.Requests() {
			if r.Path == vetPath && r.Status == 502 {
				n++
			}
		}
		return n == 2
	})
	if r := e.run("kilroy/ci/vet"); r.Status == StatusCompleted {
		t.Fatal("vet completed although its completion failed")
	}
	// The worker arms its retry timer after it has seen the 502s, which
	// the fake logs before the worker hears of them; so keep moving the
	// clock on, a throttle interval at a time, until the retry goes out.
	waitFor(t, "the retried completion", func() bool {
		e.clock.Advance(DefaultThrottle)
		return e.run("kilroy/ci/vet").Status == StatusCompleted
	})

	d.finish(runVetFailed)
	mustOK(t, pub.Close(t.Context()))
	vet := e.run("kilroy/ci/vet")
	if vet.Conclusion != ConclusionFailure || len(vet.Annotations) != 60 {
		t.Errorf("vet: %s with %d annotations, want failure with 60", vet.Conclusion, len(vet.Annotations))
	}
	if !strings.Contains(e.logs.String(), "will retry") {
		t.Errorf("the failure was not logged:\n%s", e.logs.String())
	}
}

// TestPublisherFailureBetweenBatches fails the last of three annotation
// requests: the next round sends only the annotations GitHub lacks.
func TestPublisherFailureBetweenBatches(t *testing.T) {
	e := newGHEnv(t)
	p := load(t, ciDOT)
	failed, appends := false, 0
	api := &recordingAPI{API: e.client, clock: e.clock, fail: func(n int, id int64, u ghapp.CheckRunUpdate) error {
		if u.Status != "" || u.Output == nil || len(u.Output.Annotations) == 0 {
			return nil
		}
		// Fail the third batch, once: the second went through.
		if appends++; appends == 2 && !failed {
			failed = true
			return &ghapp.Error{Op: "update check run", Status: 502, Err: fmt.Errorf("bad gateway")}
		}
		return nil
	}}
	pub := e.publisher(p, api, e.options())
	mustOK(t, pub.Queued(t.Context()))
	d := &driver{t: t, p: p, l: pub}
	d.pass("start", "build").pass("build", "vet").start("vet").attempt("vet", true, vetFails(vetFindings(120)))
	d.finish(runVetFailed)
	mustOK(t, pub.Close(t.Context()))

	if !failed {
		t.Fatal("no annotation batch was failed")
	}
	vet := e.run("kilroy/ci/vet")
	if got, want := requestAnnotations(t, vet), []int{50, 50, 20}; !slices.Equal(got, want) {
		t.Errorf("annotations per accepted request: %v, want %v", got, want)
	}
	seen := map[string]bool{}
	for _, a := range vet.Annotations {
		k := fmt.Sprintf("%s:%d", a.Path, a.StartLine)
		if seen[k] {
			t.Errorf("annotation %s sent twice", k)
		}
		seen[k] = true
	}
	if vet.Status != StatusCompleted || len(seen) != 120 {
		t.Errorf("vet: %s with %d distinct annotations, want completed with 120", vet.Status, len(seen))
	}
}

// TestPublisherRateLimited: a secondary rate limit longer than ghapp sits
// out reaches the Publisher, which waits it out before trying again.
func TestPublisherRateLimited(t *testing.T) {
	e := newGHEnv(t)
	p := load(t, ciDOT)
	pub := e.publisher(p, nil, e.options())
	mustOK(t, pub.Queued(t.Context()))
	e.fake.FailNext("PATCH", "/api/v3/repos/acme/widgets/check-runs/*", 1, 403, map[string]string{"Retry-After": "120"})
	mustOK(t, pub.Cancel(t.Context(), "cancelled by @octocat"))

	if !slices.Contains(e.clock.Sleeps(), 120*time.Second) {
		t.Errorf("sleeps %v, want the 2m the rate limit asked for", e.clock.Sleeps())
	}
	for _, r := range e.runs() {
		if r.Status != StatusCompleted || r.Conclusion != ConclusionCancelled {
			t.Errorf("%s: %s/%s, want completed/cancelled", r.Name, r.Status, r.Conclusion)
		}
	}
}
