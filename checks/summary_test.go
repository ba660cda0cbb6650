package checks

import (
	"strings"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/attractor/findings"
)

// vetFailed is the failure findings a vet node reports.
func vetFailed() attractor.Outcome {
	return attractor.Outcome{
		Status:        attractor.StatusFail,
		FailureClass:  attractor.ClassDeterministic,
		FailureReason: "verify command exited with status 1: calc/add.go:7:9: printf: wrong verb",
		Findings: []findings.Finding{
			{Path: "calc/add.go", Line: 7, Column: 9, Level: findings.LevelError, Message: "printf: wrong verb %d for string", Tool: findings.ToolGo},
			{Path: "calc/sub.go", Line: 3, Level: findings.LevelWarning, Message: "unused result", Tool: findings.ToolGo},
		},
	}
}

// failedRun: build passes, vet fails, the run stops.
func failedRun(t *testing.T) *RunView {
	s := newScript(t, ciDOT, RunInfo{Pipeline: "ci", RunID: "r1", HeadSHA: sha(1)})
	s.pass("start", sha(2), "build", 0).
		pass("build", sha(3), "vet", 12300*time.Millisecond).
		start("vet").attempt("vet", true, vetFailed(), 4*time.Second).checkpoint("vet", sha(4))
	return s.finish(&attractor.RunResult{RunID: "r1", Status: attractor.StatusFail, FailedNode: "vet",
		FailureClass: attractor.ClassDeterministic, FailureReason: "vet failed and no edge matches", Duration: 17 * time.Second})
}

func TestSummaryGolden(t *testing.T) {
	tail := func(node, dir string) string { return "output of " + node + " in " + dir + "\nFAIL\n" }
	for _, tc := range []struct {
		name string
		view func(t *testing.T) *RunView
		opts RenderOptions
	}{
		{"failed_github.md", failedRun, withTail(githubOpts(), tail)},
		{"failed_local.md", failedRun, RenderOptions{OutputTail: tail}},
		{"branch_retry.md", branchRun, githubOpts()},
		{"superseded.md", supersededRun, githubOpts()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			title, summary, text := Summary(tc.view(t), tc.opts)
			golden(t, tc.name, "# title\n"+title+"\n# summary\n"+summary+"# text\n"+text)
		})
	}
}

func withTail(o RenderOptions, f func(node, dir string) string) RenderOptions {
	o.OutputTail = f
	return o
}

// branchRun: test fails once on a transient error and passes on retry;
// the gate goes to notes, so publish is not on the path.
func branchRun(t *testing.T) *RunView {
	s := newScript(t, branchDOT, RunInfo{RunID: "r2", HeadSHA: sha(5)})
	s.pass("start", sha(6), "test", 0).start("test").
		attempt("test", false, attractor.Outcome{Status: attractor.StatusFail, FailureClass: attractor.ClassTransientInfra, FailureReason: "connection reset"}, time.Second).
		attempt("test", true, attractor.Outcome{Status: attractor.StatusSuccess}, 65*time.Second).checkpoint("test", sha(7)).edge("test", "gate").
		pass("gate", sha(8), "notes", 0).pass("notes", sha(9), "done", 2*time.Second).pass("done", sha(10), "", 0)
	return s.finish(&attractor.RunResult{RunID: "r2", Status: attractor.StatusSuccess, Duration: 70 * time.Second})
}

// supersededRun: a newer push cancels the run while vet is running.
func supersededRun(t *testing.T) *RunView {
	s := newScript(t, ciDOT, RunInfo{Pipeline: "ci", RunID: "r3", HeadSHA: sha(1)})
	s.pass("start", sha(2), "build", 0).pass("build", sha(3), "vet", time.Second).start("vet")
	s.r.Cancel("superseded by " + shortSHA(sha(11)))
	return s.r.View()
}

func TestSkipReasons(t *testing.T) {
	for _, tc := range []struct {
		name string
		view func(t *testing.T) *RunView
		want map[string]string // node → state: reason
	}{
		{"failed", failedRun, map[string]string{
			"artifacts": "skipped: not on the path taken: vet failed",
			"done":      "skipped: not on the path taken: vet failed",
		}},
		{"branch", branchRun, map[string]string{
			"publish": "skipped: not on the path taken: gate went to notes",
		}},
		{"superseded", supersededRun, map[string]string{
			"vet":       "cancelled: superseded by " + shortSHA(sha(11)),
			"artifacts": "skipped: superseded by " + shortSHA(sha(11)),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.view(t)
			for id, want := range tc.want {
				n := v.Node(id)
				if got := string(n.State) + ": " + n.SkipReason; got != want {
					t.Errorf("%s: got %q, want %q", id, got, want)
				}
			}
		})
	}
}

func TestSummaryTitle(t *testing.T) {
	for _, tc := range []struct {
		view func(t *testing.T) *RunView
		want string
	}{
		{failedRun, "2 of 5 nodes passed · vet failed (2 findings)"},
		{branchRun, "5 of 6 nodes passed · 1 node skipped"},
		{supersededRun, "cancelled: superseded by " + shortSHA(sha(11)) + " · 2 of 5 nodes passed"},
	} {
		title, _, _ := Summary(tc.view(t), RenderOptions{})
		if title != tc.want {
			t.Errorf("title = %q, want %q", title, tc.want)
		}
	}
}

// TestSummaryOfPartialRun: a run that ended partial_success is never
// titled or introduced as a success; both name the tolerated nodes.
func TestSummaryOfPartialRun(t *testing.T) {
	v := branchRun(t)
	v.Status, v.Tolerated = RunPartial, []string{"unit"}
	title, summary, _ := Summary(v, RenderOptions{})
	for _, s := range []string{title, strings.SplitN(summary, "\n", 2)[0]} {
		if !strings.Contains(s, "tolerated by the pipeline") || !strings.Contains(s, "unit") || strings.Contains(s, "Succeeded") {
			t.Errorf("%q does not say the run is partial, naming unit", s)
		}
	}
}

func TestMermaidEscapesLabels(t *testing.T) {
	_, summary, _ := Summary(failedRun(t), RenderOptions{})
	want := `n1["Build #91;all#93; #quot;pkgs#quot; #40;fast#41; #124; #123;x#125;"]:::success`
	if !strings.Contains(summary, want) {
		t.Errorf("summary lacks %s:\n%s", want, summary)
	}
	// Every label line holds exactly its two delimiting quotes.
	for _, line := range strings.Split(summary, "\n") {
		if strings.HasPrefix(line, "  n") && strings.Contains(line, `"`) && strings.Count(line, `"`)%2 != 0 {
			t.Errorf("unbalanced quotes in %q", line)
		}
	}
}
