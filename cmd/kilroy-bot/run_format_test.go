package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSummaryStyle(t *testing.T) {
	type style struct{ Text, Color bool }
	for _, tc := range []struct {
		format  formatFlag
		tty     bool
		noColor string
		want    style
	}{
		{"", true, "", style{Text: true, Color: true}},
		{"", true, "1", style{Text: true}},
		{"", false, "", style{}}, // a pipe or file gets report.md's Markdown
		{formatText, false, "", style{Text: true}},
		{formatText, true, "", style{Text: true, Color: true}},
		{formatMarkdown, true, "", style{}},
	} {
		text, color := summaryStyle(tc.format, tc.tty, tc.noColor)
		if diff := cmp.Diff(style{text, color}, tc.want); diff != "" {
			t.Errorf("summaryStyle(%q, tty %v, NO_COLOR=%q) (-got +want):\n%s", tc.format, tc.tty, tc.noColor, diff)
		}
	}
}

// TestRunFormatText: --format text into a pipe prints the summary, in no
// colour, naming the failing finding's place, the run directory and the
// report, which stays Markdown.
func TestRunFormatText(t *testing.T) {
	repo := newRepo(t, map[string]string{".kilroy/ci.dot": dotFor(`
  build [shape=parallelogram, tool_command="echo built > built.txt"]
  check [shape=octagon, command=` + dotQuote(`echo "main.go:3:1: something is broken" >&2; exit 1`) + `]
  start -> build -> check -> exit`)})
	runDir := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runCmd("run", "--repo", repo, "--run-dir", runDir, "--format", "text")
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstderr:\n%s", code, stderr)
	}
	if strings.Contains(stdout, "\x1b[") {
		t.Errorf("colour in a pipe:\n%q", stdout)
	}
	lines := strings.Split(stdout, "\n")
	got := map[string]bool{
		"headline":  strings.HasPrefix(lines[0], "kilroy/ci: "),
		"build":     strings.Contains(stdout, "\n  ✓ build "),
		"check":     strings.Contains(stdout, "\n  ✗ check "),
		"finding":   strings.Contains(stdout, "\n      main.go:3:1 error something is broken\n"),
		"run dir":   strings.Contains(stdout, "\nrun directory "+runDir+"\n"),
		"report":    strings.Contains(stdout, "\nreport "+filepath.Join(runDir, "report.md")+"\n"),
		"no tables": !strings.Contains(stdout, "|"),
	}
	want := map[string]bool{"headline": true, "build": true, "check": true, "finding": true, "run dir": true, "report": true, "no tables": true}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("stdout (-got +want):\n%s\n%s", diff, stdout)
	}
	report, err := os.ReadFile(filepath.Join(runDir, "report.md"))
	if err != nil || !strings.HasPrefix(string(report), "# kilroy/ci: ") {
		t.Errorf("report.md is not the Markdown report: %v\n%s", err, report)
	}
}

func TestRunFormatBad(t *testing.T) {
	code, stdout, stderr := runCmd("run", "--format", "html")
	if code != 2 || stdout != "" || !strings.Contains(stderr, `want text or markdown, got "html"`) {
		t.Errorf("run --format html: exit %d, stdout %q, stderr %q; want 2 and the choices", code, stdout, stderr)
	}
}
