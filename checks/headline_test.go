package checks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// reasonOf is the failure reason attractor gives a tool node that exited
// with status 1 after printing out: the lead, then at most the last 2000
// bytes of the output (processFailure, reasonTailBytes), "…" when cut.
func reasonOf(out string) string {
	out = strings.TrimSpace(out)
	if len(out) > 2000 {
		out = "…" + out[len(out)-2000:]
	}
	return "tool_command exited with status 1: " + out
}

// captured reads an output captured from the real tool (testdata/output,
// paths of the capturing machine replaced).
func captured(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "output", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestHeadlineOfRealOutputs: the outputs that made bad titles (issue 26)
// give the line that says what went wrong, clean of colour codes.
func TestHeadlineOfRealOutputs(t *testing.T) {
	const lead = "tool_command exited with status 1: "
	tests := []struct {
		file, out string // out: the output when not a file
		want      string
	}{
		// pytest --color=yes: the finding, not the session banner.
		{file: "pytest-color.txt", want: lead + "test_calc.py:6: AssertionError"},
		// npm ci without a lockfile: its whole log, message first, then
		// usage; the headline is the message, not "code EUSAGE" or usage.
		{out: captured(t, "npm-ci-usage.txt")[:1200],
			want: lead + "npm error The `npm ci` command can only install with an existing package-lock.json or"},
		// The same log cut to the reason's last 2000 bytes is all usage
		// text: the last line that is not npm's noise.
		{file: "npm-ci-usage.txt", want: lead + "npm error A complete log of this run can be found in: /home/dev/.npm/_logs/2026-11-28T03_52_42_888Z-debug-0.log"},
		{out: "npm error Missing script: \"lint\"\nnpm error\nnpm error To see a list of scripts, run:\nnpm error   npm run\n" +
			"npm error A complete log of this run can be found in: /home/dev/.npm/_logs/x-debug-0.log\n",
			want: lead + `npm error Missing script: "lint"`},
		// pip's retries warn about a broken connection; the error follows.
		{file: "pip-retries.txt", want: lead + "ERROR: Could not find a version that satisfies the requirement requestz-nonexist==1.0 (from versions: none)"},
		// cargo says "Updating crates.io index" first.
		{file: "cargo-index.txt", want: lead + "error: failed to get `serde` as a dependency of package `cg v0.1.0 (/src/cg)`"},
		{out: "=== RUN   TestAdd\n    calc_test.go:9: got 1, want 5\n--- FAIL: TestAdd (0.00s)\nFAIL\nexit status 1\n",
			want: lead + "calc_test.go:9: got 1, want 5"},
		{out: "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n    import yaml\nModuleNotFoundError: No module named 'yaml'\n",
			want: lead + "ModuleNotFoundError: No module named 'yaml'"},
		{out: "building\nstep 2\ndone, but exit 1 anyway\n", want: lead + "done, but exit 1 anyway"},
	}
	for _, tt := range tests {
		out := tt.out
		if tt.file != "" {
			out = captured(t, tt.file)
		}
		if got := Headline(reasonOf(out)); got != tt.want {
			t.Errorf("%s:\nHeadline = %q\nwant       %q", firstNonEmpty(tt.file, firstLine(out)), got, tt.want)
		}
	}
}

func TestHeadlineKeepsOneLineReasons(t *testing.T) {
	for _, r := range []string{"tool_command timed out after 15m (node timeout; raise it with timeout=…)",
		"tool_command exited with status 2", "the agent reported OUTCOME:FAIL", ""} {
		if got := Headline(r); got != r {
			t.Errorf("Headline(%q) = %q, want it unchanged", r, got)
		}
	}
}

// TestCleanRealOutputs: the captured outputs lose every escape and control
// character and keep their text.
func TestCleanRealOutputs(t *testing.T) {
	raw := captured(t, "pytest-color.txt")
	if n := strings.Count(raw, "\x1b["); n < 10 {
		t.Fatalf("the pytest capture has %d colour codes; it was meant to be run with --color=yes", n)
	}
	got := Clean(raw)
	for _, want := range []string{
		"test_calc.py F.                                                          [100%]\n",
		"E       assert -1 == 5\n",
		"test_calc.py:6: AssertionError\n",
		"FAILED test_calc.py::test_add - assert -1 == 5\n",
		"========================= 1 failed, 1 passed in 0.07s ==========================",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("cleaned pytest output lacks %q:\n%s", want, got)
		}
	}
	for _, name := range []string{"pytest-color.txt", "npm-ci-usage.txt", "pip-retries.txt", "cargo-index.txt"} {
		if bad := controlIn(Clean(captured(t, name))); bad != "" {
			t.Errorf("%s: cleaned output still has %s", name, bad)
		}
	}
}

// TestChecksOfRealOutputs: a verify node that failed with each captured
// output gives checks whose titles carry the headline and whose every
// text (title, summary, text, annotations) is clean of escapes.
func TestChecksOfRealOutputs(t *testing.T) {
	tests := []struct{ file, want string }{
		{"pytest-color.txt", "test_calc.py:6: AssertionError"},
		{"pip-retries.txt", "ERROR: Could not find a version that satisfies the requirement"},
		{"cargo-index.txt", "error: failed to get `serde` as a dependency"},
	}
	for _, tt := range tests {
		out := captured(t, tt.file)
		s := newScript(t, ciDOT, RunInfo{Pipeline: "ci", RunID: "r1", HeadSHA: sha(1)})
		s.pass("start", sha(2), "build", time.Second).pass("build", sha(3), "vet", time.Second)
		s.start("vet").attempt("vet", true, attractor.Outcome{Status: attractor.StatusFail,
			FailureClass: attractor.ClassDeterministic, FailureReason: reasonOf(out)}, time.Second)
		s.checkpoint("vet", sha(4))
		s.must(s.r.RunFinished(t.Context(), &attractor.RunResult{Status: attractor.StatusFail, FailedNode: "vet",
			FailureReason: reasonOf(out)}))
		opts := RenderOptions{OutputTail: func(_, _ string) string { return out }}
		title, summary, text := Summary(s.r.View(), opts)
		rep := VerifyCheck(s.r.View(), "vet", opts)
		if !strings.Contains(title, tt.want) || !strings.Contains(rep.Title, tt.want) {
			t.Errorf("%s: titles %q and %q, want both to carry %q", tt.file, title, rep.Title, tt.want)
		}
		all := []string{title, summary, text, rep.Title, rep.Summary, rep.Text}
		for _, a := range rep.Annotations {
			all = append(all, a.Title, a.Message)
		}
		for i, s := range all {
			if bad := controlIn(s); bad != "" {
				t.Errorf("%s: text %d has %s:\n%s", tt.file, i, bad, s)
			}
		}
	}
}
