package checks

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// summaryShape is what a reader takes from a terminal summary: the
// headline, each node's mark, id and state in order, the findings' places
// and where things are.
type summaryShape struct {
	Headline string
	Nodes    [][3]string // mark, id, state
	Findings []string    // "path:line[:col] level"
	Places   []string    // "run directory …", "report …"
	Took     bool
}

func shapeOf(t *testing.T, s string) summaryShape {
	t.Helper()
	var sh summaryShape
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	sh.Headline = lines[0]
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		switch {
		case strings.HasPrefix(l, "      "):
			sh.Findings = append(sh.Findings, strings.Join(f[:min(2, len(f))], " "))
		case strings.HasPrefix(l, "  "):
			sh.Nodes = append(sh.Nodes, [3]string{f[0], f[1], f[2]})
		case f[0] == "took":
			sh.Took = true
		default:
			sh.Places = append(sh.Places, l)
		}
	}
	return sh
}

func TestTerminalSummary(t *testing.T) {
	opts := TerminalOptions{RunDir: "/data/runs/r1", Branch: "kilroy/run/ci/r1", Report: "/data/runs/r1/report.md"}
	for _, tc := range []struct {
		name string
		view func(t *testing.T) *RunView
		opts TerminalOptions
		want summaryShape
	}{
		{"failed", failedRun, opts, summaryShape{
			Headline: "kilroy/ci: 2 of 5 nodes passed · vet failed (2 findings)",
			Nodes: [][3]string{{"✓", "start", "success"}, {"✓", "build", "success"}, {"✗", "vet", "failed"},
				{"-", "artifacts", "skipped"}, {"-", "done", "skipped"}},
			Findings: []string{"calc/add.go:7:9 error", "calc/sub.go:3 warning"},
			Places:   []string{"run directory /data/runs/r1", "run branch kilroy/run/ci/r1", "report /data/runs/r1/report.md"},
			Took:     true,
		}},
		{"capped findings, no places", failedRun, TerminalOptions{MaxFindings: 1}, summaryShape{
			Headline: "kilroy/ci: 2 of 5 nodes passed · vet failed (2 findings)",
			Nodes: [][3]string{{"✓", "start", "success"}, {"✓", "build", "success"}, {"✗", "vet", "failed"},
				{"-", "artifacts", "skipped"}, {"-", "done", "skipped"}},
			Findings: []string{"calc/add.go:7:9 error", "1 more"},
			Took:     true,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plain := TerminalSummary(tc.view(t), tc.opts)
			if ansi.MatchString(plain) {
				t.Errorf("colour without Color:\n%q", plain)
			}
			if diff := cmp.Diff(shapeOf(t, plain), tc.want); diff != "" {
				t.Errorf("summary (-got +want):\n%s\n%s", diff, plain)
			}
			tc.opts.Color = true
			colored := TerminalSummary(tc.view(t), tc.opts)
			if diff := cmp.Diff(ansi.ReplaceAllString(colored, ""), plain); diff != "" {
				t.Errorf("with Color, less its escapes, differs from without (-got +want):\n%s", diff)
			}
		})
	}
}

// TestTerminalSummaryColors: a node's mark and state take its state's
// colour, a finding's level its level's, and the headline the run's.
func TestTerminalSummaryColors(t *testing.T) {
	s := TerminalSummary(failedRun(t), TerminalOptions{Color: true})
	for _, want := range []string{
		"\x1b[31m✗\x1b[0m vet", "\x1b[31mfailed\x1b[0m",
		"\x1b[32m✓\x1b[0m build", "\x1b[32msuccess\x1b[0m",
		"\x1b[31merror\x1b[0m", "\x1b[33mwarning\x1b[0m",
		"\x1b[31m\x1b[1mkilroy/ci:\x1b[0m\x1b[0m",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in\n%q", want, s)
		}
	}
	if s := TerminalSummary(branchRun(t), TerminalOptions{Color: true}); !strings.Contains(s, "\x1b[32m\x1b[1mkilroy/") {
		t.Errorf("a successful run's headline is not green:\n%q", s)
	}
}

// TestTerminalSummaryRetries: a node that passed on its second attempt
// says so, and a skipped node gives its reason.
func TestTerminalSummaryRetries(t *testing.T) {
	s := TerminalSummary(branchRun(t), TerminalOptions{})
	var test string
	for _, l := range strings.Split(s, "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[1] == "test" {
			test = l
		}
	}
	if !strings.Contains(test, "success") || !strings.Contains(test, "2 attempts") || !strings.Contains(test, "1m06s") {
		t.Errorf("test's line %q: want success, 2 attempts and 1m06s\n%s", test, s)
	}
}
