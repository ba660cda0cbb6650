package checks

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/attractor/findings"
)

func TestNodeConclusion(t *testing.T) {
	fail := func(c attractor.FailureClass, reason string) attractor.Outcome {
		return attractor.Outcome{Status: attractor.StatusFail, FailureClass: c, FailureReason: reason}
	}
	for _, tc := range []struct {
		name       string
		run        RunStatus
		node       NodeView
		status     string
		conclusion string
	}{
		{"pending", RunRunning, NodeView{State: StatePending}, StatusQueued, ""},
		{"running", RunRunning, NodeView{State: StateRunning}, StatusInProgress, ""},
		{"retrying", RunRunning, NodeView{State: StateRetrying}, StatusInProgress, ""},
		{"success", RunSuccess, NodeView{State: StateSuccess}, StatusCompleted, ConclusionSuccess},
		{"partial", RunSuccess, NodeView{State: StatePartial}, StatusCompleted, ConclusionNeutral},
		{"deterministic", RunFailed, NodeView{State: StateFailed, Outcome: fail(attractor.ClassDeterministic, "exit 1")}, StatusCompleted, ConclusionFailure},
		{"no class", RunFailed, NodeView{State: StateFailed, Outcome: fail("", "exit 1")}, StatusCompleted, ConclusionFailure},
		{"timeout", RunFailed, NodeView{State: StateFailed, Outcome: fail(attractor.ClassTransientInfra, "verify command timed out after 10m0s (node timeout; raise it with timeout=…)")}, StatusCompleted, ConclusionTimedOut},
		{"transient, not a timeout", RunFailed, NodeView{State: StateFailed, Outcome: fail(attractor.ClassTransientInfra, "connection reset")}, StatusCompleted, ConclusionFailure},
		{"timeout in meta", RunFailed, NodeView{State: StateFailed, Outcome: attractor.Outcome{Status: attractor.StatusFail, FailureClass: attractor.ClassTransientInfra, Meta: map[string]any{"timed_out": true}}}, StatusCompleted, ConclusionTimedOut},
		{"canceled class", RunCancelled, NodeView{State: StateFailed, Outcome: fail(attractor.ClassCanceled, "verify command was canceled")}, StatusCompleted, ConclusionCancelled},
		{"class in meta wins", RunFailed, NodeView{State: StateFailed, Outcome: attractor.Outcome{Status: attractor.StatusFail, FailureClass: attractor.ClassDeterministic, Meta: map[string]any{"failure_class": "canceled"}}}, StatusCompleted, ConclusionCancelled},
		{"budget", RunFailed, NodeView{State: StateFailed, Outcome: fail(attractor.ClassBudgetExhausted, "out of turns")}, StatusCompleted, ConclusionFailure},
		{"stopped mid-attempt", RunCancelled, NodeView{State: StateCancelled}, StatusCompleted, ConclusionCancelled},
		{"never reached, run failed", RunFailed, NodeView{State: StateSkipped}, StatusCompleted, ConclusionSkipped},
		{"never reached, run succeeded", RunSuccess, NodeView{State: StateSkipped}, StatusCompleted, ConclusionSkipped},
		{"never reached, run cancelled", RunCancelled, NodeView{State: StateSkipped}, StatusCompleted, ConclusionCancelled},
		{"skipped by handler", RunCancelled, NodeView{State: StateSkipped, HasOutcome: true, Outcome: attractor.Outcome{Status: attractor.StatusSkipped}}, StatusCompleted, ConclusionSkipped},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, conclusion := NodeConclusion(&RunView{Status: tc.run}, &tc.node)
			if status != tc.status || conclusion != tc.conclusion {
				t.Errorf("got %s/%s, want %s/%s", status, conclusion, tc.status, tc.conclusion)
			}
		})
	}
}

func TestRunConclusion(t *testing.T) {
	for _, tc := range []struct {
		v          RunView
		status     string
		conclusion string
	}{
		{RunView{Status: RunPending}, StatusQueued, ""},
		{RunView{Status: RunRunning}, StatusInProgress, ""},
		{RunView{Status: RunSuccess}, StatusCompleted, ConclusionSuccess},
		{RunView{Status: RunPartial, Tolerated: []string{"unit"}}, StatusCompleted, ConclusionNeutral},
		{RunView{Status: RunFailed, FailureClass: attractor.ClassDeterministic}, StatusCompleted, ConclusionFailure},
		{RunView{Status: RunFailed, FailureClass: attractor.ClassTransientInfra, Reason: "tool_command timed out after 1s"}, StatusCompleted, ConclusionTimedOut},
		{RunView{Status: RunCancelled}, StatusCompleted, ConclusionCancelled},
	} {
		status, conclusion := RunConclusion(&tc.v)
		if status != tc.status || conclusion != tc.conclusion {
			t.Errorf("%+v: got %s/%s, want %s/%s", tc.v, status, conclusion, tc.status, tc.conclusion)
		}
	}
}

func TestVerifyCheckFailed(t *testing.T) {
	rep := VerifyCheck(failedRun(t), "vet", githubOpts())
	want := []Annotation{
		{Path: "calc/add.go", StartLine: 7, EndLine: 7, StartColumn: 9, EndColumn: 9, Level: LevelFailure, Message: "printf: wrong verb %d for string", Title: "go vet"},
		{Path: "calc/sub.go", StartLine: 3, EndLine: 3, Level: LevelWarning, Message: "unused result", Title: "go vet"},
	}
	if diff := cmp.Diff(rep.Annotations, want); diff != "" {
		t.Errorf("annotations (-got +want):\n%s", diff)
	}
	got := [5]string{rep.Name, rep.ExternalID, rep.Status, rep.Conclusion, rep.Title}
	if w := [5]string{"kilroy/ci/vet", "r1/vet", StatusCompleted, ConclusionFailure, "failed · 1 error, 1 warning"}; got != w {
		t.Errorf("got %q, want %q", got, w)
	}
	golden(t, "verify_vet.md", "# summary\n"+rep.Summary+"# text\n"+rep.Text)
}

func TestVerifyCheckSkipped(t *testing.T) {
	rep := VerifyCheck(failedRun(t), "artifacts", githubOpts())
	if rep.Conclusion != ConclusionSkipped || rep.Title != "skipped: not on the path taken: vet failed" {
		t.Errorf("got %s %q", rep.Conclusion, rep.Title)
	}
	if len(rep.Annotations) != 0 {
		t.Errorf("a skipped node has annotations: %v", rep.Annotations)
	}
}

func TestFindingColumns(t *testing.T) {
	for _, tc := range []struct {
		f    findings.Finding
		want Annotation
	}{
		{findings.Finding{Path: "a.go", Line: 4, Column: 2, Level: findings.LevelError, Message: "m"},
			Annotation{Path: "a.go", StartLine: 4, EndLine: 4, StartColumn: 2, EndColumn: 2, Level: LevelFailure, Message: "m", Title: "t"}},
		// Columns only on one line, as GitHub requires.
		{findings.Finding{Path: "a.go", Line: 4, Column: 2, EndLine: 6, Level: findings.LevelWarning, Message: "m"},
			Annotation{Path: "a.go", StartLine: 4, EndLine: 6, Level: LevelWarning, Message: "m", Title: "t"}},
		{findings.Finding{Path: "a.go", Line: 4, EndLine: 2, Level: findings.LevelNotice, Message: "m"},
			Annotation{Path: "a.go", StartLine: 4, EndLine: 4, Level: LevelNotice, Message: "m", Title: "t"}},
		{findings.Finding{Path: "a.go", Line: 0, Level: "remark", Message: ""},
			Annotation{Path: "a.go", StartLine: 1, EndLine: 1, Level: LevelNotice, Message: "remark reported by t", Title: "t"}},
	} {
		if diff := cmp.Diff(findingAnnotation(tc.f, "t"), tc.want); diff != "" {
			t.Errorf("%+v (-got +want):\n%s", tc.f, diff)
		}
	}
}

func TestToolTitle(t *testing.T) {
	for _, tc := range []struct{ tool, command, want string }{
		{findings.ToolGo, "go vet ./...", "go vet"},
		{findings.ToolGo, "GOFLAGS=-mod=mod /usr/local/bin/staticcheck ./...", "staticcheck"},
		{findings.ToolGoTest, "go test ./...", "go test"},
		{findings.ToolGCC, "make", "gcc/clang"},
		{findings.ToolGeneric, "", "node"},
		{findings.ToolGo, "", "go"},
		{findings.ToolESLint, "npx eslint .", "eslint"},
	} {
		if got := toolTitle(tc.tool, tc.command, "node"); got != tc.want {
			t.Errorf("toolTitle(%q, %q) = %q, want %q", tc.tool, tc.command, got, tc.want)
		}
	}
}

// manyFindings are n findings cycling through the levels, notices first
// so that sorting has work to do.
func manyFindings(n int) []findings.Finding {
	levels := []findings.Level{findings.LevelNotice, findings.LevelWarning, findings.LevelError}
	out := make([]findings.Finding, n)
	for i := range out {
		out[i] = findings.Finding{Path: "x.go", Line: i + 1, Level: levels[i%3], Message: fmt.Sprintf("finding %d", i), Tool: findings.ToolGo}
	}
	return out
}

// verifyView is a finished run whose only node failed with fs.
func verifyView(kind attractor.Kind, o attractor.Outcome) *RunView {
	return &RunView{Pipeline: "ci", RunID: "r9", Status: RunFailed, FailedNode: "lint", Nodes: []NodeView{{
		ID: "lint", Label: "lint", Kind: kind, Command: "golangci-lint run", Verify: true, State: StateFailed,
		Attempts: 1, Duration: time.Second, Outcome: o, HasOutcome: true,
	}}}
}

func TestBatchesMostSevereFirst(t *testing.T) {
	rep := VerifyCheck(verifyView(attractor.KindVerify, attractor.Outcome{Status: attractor.StatusFail, Findings: manyFindings(120)}), "lint", RenderOptions{})
	batches := Batches(rep.Annotations, AnnotationsPerRequest)
	if got := []int{len(batches[0]), len(batches[1]), len(batches[2])}; len(batches) != 3 || !cmp.Equal(got, []int{50, 50, 20}) {
		t.Fatalf("batch sizes %v of %d batches, want [50 50 20]", got, len(batches))
	}
	var levels []string
	for _, b := range batches {
		for _, a := range b {
			levels = append(levels, a.Level)
		}
	}
	want := append(append(repeat(LevelFailure, 40), repeat(LevelWarning, 40)...), repeat(LevelNotice, 40)...)
	if diff := cmp.Diff(levels, want); diff != "" {
		t.Errorf("levels across batches (-got +want):\n%s", diff)
	}
	// Within a level the output order stays: finding 2 is the first error.
	if batches[0][0].Message != "finding 2" || batches[0][1].Message != "finding 5" {
		t.Errorf("first errors %q, %q; want finding 2, finding 5", batches[0][0].Message, batches[0][1].Message)
	}
}

func TestBatchesDoesNotModifyInput(t *testing.T) {
	in := []Annotation{{Level: LevelNotice}, {Level: LevelFailure}}
	Batches(in, 0)
	if in[0].Level != LevelNotice {
		t.Error("Batches sorted its input")
	}
	if got := Batches(nil, 50); len(got) != 0 {
		t.Errorf("Batches(nil) = %v", got)
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func TestAnnotationCap(t *testing.T) {
	rep := VerifyCheck(verifyView(attractor.KindVerify, attractor.Outcome{Status: attractor.StatusFail, Findings: manyFindings(MaxAnnotations + 234)}), "lint", githubOpts())
	if len(rep.Annotations) != MaxAnnotations || rep.Omitted != 234 {
		t.Fatalf("%d annotations, %d omitted; want %d, 234", len(rep.Annotations), rep.Omitted, MaxAnnotations)
	}
	if !strings.Contains(rep.Text, "234 more findings not shown") {
		t.Errorf("text does not count the overflow:\n%s", rep.Text)
	}
	// The cap keeps the most severe: every error survives.
	errs := 0
	for _, a := range rep.Annotations {
		if a.Level == LevelFailure {
			errs++
		}
	}
	if want := (MaxAnnotations + 234) / 3; errs != want {
		t.Errorf("%d failures kept, want all %d", errs, want)
	}
}

func TestAnnotationFieldLimits(t *testing.T) {
	long := strings.Repeat("é", 70000) // 140 000 bytes
	o := attractor.Outcome{Status: attractor.StatusFail, Findings: []findings.Finding{{Path: "a.go", Line: 1, Level: findings.LevelError, Message: long, Tool: findings.ToolGo}}}
	v := verifyView(attractor.KindVerify, o)
	v.Nodes[0].Command = strings.Repeat("x", 400) + " ./..."
	a := VerifyCheck(v, "lint", RenderOptions{}).Annotations[0]
	if len(a.Message) > maxAnnMessage || len(a.Title) > maxAnnTitle {
		t.Errorf("message %d bytes, title %d bytes", len(a.Message), len(a.Title))
	}
	if !strings.HasSuffix(a.Message, "…") || !utf8Valid(a.Message) || !utf8Valid(a.Title) {
		t.Error("clipped fields are not valid UTF-8 ending in an ellipsis")
	}
}

func TestDuplicateFindingsAnnotateOnce(t *testing.T) {
	f := findings.Finding{Path: "a.go", Line: 3, Level: findings.LevelError, Message: "boom", Tool: findings.ToolGo}
	rep := VerifyCheck(verifyView(attractor.KindVerify, attractor.Outcome{Status: attractor.StatusFail, Findings: []findings.Finding{f, f}}), "lint", RenderOptions{})
	if len(rep.Annotations) != 1 {
		t.Errorf("%d annotations for one repeated finding", len(rep.Annotations))
	}
}

func TestUnknownNode(t *testing.T) {
	rep := VerifyCheck(failedRun(t), "nope", RenderOptions{})
	if rep.Status != StatusCompleted || rep.Conclusion != ConclusionSkipped {
		t.Errorf("got %s/%s", rep.Status, rep.Conclusion)
	}
}

// TestVerifyCheckKind: the summary names the node's kind when the view
// knows it, and leaves it out, not empty, when it does not.
func TestVerifyCheckKind(t *testing.T) {
	fail := attractor.Outcome{Status: attractor.StatusFail}
	for _, tc := range []struct {
		kind attractor.Kind
		want string
	}{
		{attractor.KindVerifyArtifacts, "Node `lint` (verify.artifacts) of pipeline `ci`"},
		{"", "Node `lint` of pipeline `ci`"},
	} {
		if s := VerifyCheck(verifyView(tc.kind, fail), "lint", RenderOptions{}).Summary; !strings.Contains(s, tc.want) {
			t.Errorf("kind %q: summary lacks %q:\n%s", tc.kind, tc.want, s)
		}
	}
}
