package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

const cleanDOT = `digraph ci {
  start [shape=Mdiamond]
  implement [prompt="Implement it"]
  exit [shape=Msquare]
  start -> implement -> exit
}
`

// writeFiles writes name → content into a temp dir and returns the paths.
func writeFiles(t *testing.T, files map[string]string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	paths := map[string]string{}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		paths[name] = p
	}
	return paths
}

func runV(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := runValidate(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestValidateSyntaxErrorOnLine4(t *testing.T) {
	f := writeFiles(t, map[string]string{"ci.dot": "digraph ci {\n  start [shape=Mdiamond]\n  exit [shape=Msquare]\n  start -> exit [label=\"done\" weight=]\n}\n"})["ci.dot"]
	code, out, _ := runV(f)
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	first := strings.SplitN(out, "\n", 2)[0]
	if !strings.HasPrefix(first, f+":4:") || !strings.Contains(first, ": error: ") || !strings.HasSuffix(first, "[syntax]") {
		t.Errorf("first line %q, want %s:4:COL: error: ... [syntax]", first, f)
	}
	if !strings.Contains(out, `      4 |   start -> exit [label="done" weight=]`) {
		t.Errorf("output does not show line 4:\n%s", out)
	}
	if !strings.HasSuffix(out, "1 error, 0 warnings in 1 file\n") {
		t.Errorf("summary missing:\n%s", out)
	}
}

func TestValidateDidYouMean(t *testing.T) {
	f := writeFiles(t, map[string]string{"ci.dot": strings.Replace(cleanDOT, "implement -> exit", "implement -> implment -> exit", 1)})["ci.dot"]
	code, out, _ := runV(f)
	want := f + `:5:25: error: "implment" is not a declared node; did you mean "implement"? [edge_target_exists]` + "\n" +
		"      5 |   start -> implement -> implment -> exit\n" +
		"        |                         ^\n" +
		`  fix: change "implment" to "implement"` + "\n"
	if code != 1 || !strings.Contains(out, want) {
		t.Errorf("exit %d, output:\n%s\nwant it to contain:\n%s", code, out, want)
	}
}

func TestValidateExitCodesAndSummary(t *testing.T) {
	files := writeFiles(t, map[string]string{
		"clean.dot": cleanDOT,
		"warn.dot":  strings.Replace(cleanDOT, `implement [prompt="Implement it"]`, `implement [prompt="x", timeout=900s, fidelity="bogus"]`, 1),
		"bad.dot":   "digraph ci { a -> b }\n",
		"empty.dot": "",
		"nodg.dot":  "// just a comment\nnode [shape=box]\n",
	})
	tests := []struct {
		name     string
		args     []string
		code     int
		summary  string
		inStdout string
		inStderr string
	}{
		{"clean", []string{files["clean.dot"]}, 0, "0 errors, 0 warnings in 1 file", "", ""},
		{"warnings only", []string{files["warn.dot"]}, 0, "0 errors, 1 warning, 1 info in 1 file", "[fidelity_valid]", ""},
		{"errors", []string{files["bad.dot"], files["clean.dot"]}, 1, "4 errors, 0 warnings in 2 files", "[edge_target_exists]", ""},
		{"empty file", []string{files["empty.dot"]}, 1, "1 error, 0 warnings in 1 file", "file is empty", ""},
		{"no digraph", []string{files["nodg.dot"]}, 1, "1 error, 0 warnings in 1 file", "file has no digraph", ""},
		{"unreadable", []string{files["clean.dot"], filepath.Join(t.TempDir(), "missing.dot")}, 2, "0 errors, 0 warnings in 1 file; 1 file could not be read", "", "cannot read"},
		{"directory", []string{t.TempDir()}, 2, "", "", "cannot read"},
		{"no files, no pipelines", []string{"--repo", t.TempDir()}, 2, "", "", "has no .kilroy/*.dot pipeline or .kilroy/config.yml to check: `kilroy-bot init` writes a starter pipeline"},
		{"repo and files", []string{"--repo", ".", files["clean.dot"]}, 2, "", "", "give either --repo or files, not both"},
		{"bad flag", []string{"--jsn", files["clean.dot"]}, 2, "", "", "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runV(tt.args...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errOut)
			}
			if tt.summary != "" && !strings.HasSuffix(out, tt.summary+"\n") {
				t.Errorf("stdout does not end with %q:\n%s", tt.summary, out)
			}
			if !strings.Contains(out, tt.inStdout) || !strings.Contains(errOut, tt.inStderr) {
				t.Errorf("want stdout containing %q and stderr containing %q; got\n%s\n---\n%s", tt.inStdout, tt.inStderr, out, errOut)
			}
		})
	}
}

func TestValidateJSON(t *testing.T) {
	files := writeFiles(t, map[string]string{
		"a.dot": strings.Replace(cleanDOT, "implement -> exit", "implement -> implment -> exit", 1),
		"b.dot": cleanDOT,
	})
	code, out, _ := runV(files["a.dot"], "--json", files["b.dot"])
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	var all, got []map[string]any
	if err := json.Unmarshal([]byte(out), &all); err != nil {
		t.Fatalf("not one JSON array: %v\n%s", err, out)
	}
	for _, d := range all {
		if d["rule"] == "edge_target_exists" {
			got = append(got, d)
		}
	}
	if len(all) != 2 { // plus exit's reachability error
		t.Errorf("%d diagnostics, want 2: %s", len(all), out)
	}
	want := []map[string]any{{
		"rule": "edge_target_exists", "severity": "error", "file": files["a.dot"], "line": 5.0, "column": 25.0,
		"edge":    map[string]any{"from": "implement", "to": "implment"},
		"message": `"implment" is not a declared node; did you mean "implement"?`,
		"fix":     `change "implment" to "implement"`,
	}}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("JSON (-got +want):\n%s", diff)
	}
	_, out, _ = runV("--json", files["b.dot"])
	if strings.TrimSpace(out) != "[]" {
		t.Errorf("clean file JSON = %q, want []", out)
	}
}

// validate reads a house node's child pipeline from the repository the
// file is in: a child that does not validate is an error at the house, a
// valid one passes, one that is not there yet is a warning.
func TestValidateManagerLoopChild(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".kilroy/ci.dot", strings.Replace(cleanDOT, `implement [prompt="Implement it"]`, `implement [shape=house, stack.child_dotfile=".kilroy/child.dot"]`, 1))
	f := filepath.Join(dir, ".kilroy", "ci.dot")

	code, out, _ := runV(f)
	if code != 0 || !strings.Contains(out, "the child pipeline .kilroy/child.dot does not exist now") || !strings.Contains(out, "[manager_loop]") {
		t.Errorf("child not there yet: exit %d, output:\n%s\nwant exit 0 and a manager_loop warning", code, out)
	}
	write(".kilroy/child.dot", "digraph child {\n  start [shape=Mdiamond]\n  work [shape=parallelogram]\n  exit [shape=Msquare]\n  start -> work -> exit\n}\n")
	code, out, _ = runV(f)
	if code != 1 || !strings.Contains(out, "the child pipeline .kilroy/child.dot does not validate") || !strings.Contains(out, "tool_command_missing") {
		t.Errorf("invalid child: exit %d, output:\n%s\nwant exit 1 and a manager_child error naming the child's problem", code, out)
	}
	write(".kilroy/child.dot", "digraph child {\n  start [shape=Mdiamond]\n  work [shape=parallelogram, tool_command=\"true\"]\n  exit [shape=Msquare]\n  start -> work -> exit\n}\n")
	code, out, _ = runV(f)
	if code != 0 || strings.Contains(out, "manager_") {
		t.Errorf("valid child: exit %d, output:\n%s\nwant exit 0 without manager diagnostics", code, out)
	}
}

func TestClipLine(t *testing.T) {
	long := strings.Repeat("a", 100) + "é" + strings.Repeat("b", 200) + "X" + strings.Repeat("c", 300)
	x := strings.Index(long, "X") + 1 // byte column of X
	for _, tc := range []struct {
		name      string
		line      string
		col       int
		wantAt    string // the text the caret must point at
		wantStart bool   // "…" at the start
		wantEnd   bool   // "…" at the end
	}{
		{"short line shown whole", "\ta [x=1 y=2]", 9, "y=2]", false, false},
		{"cut on both sides", long, x, "X", true, true},
		{"column near the start", long, 3, "aaaa", false, true},
		{"column at the end", long, len(long), "c", true, false},
		{"cut never splits a character", long, 182, "b", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shown, pad := clipLine(tc.line, tc.col)
			if n := len(strings.TrimSuffix(strings.TrimPrefix(shown, "…"), "…")); n > maxShownLine {
				t.Errorf("shown %d bytes, want at most %d", n, maxShownLine)
			}
			if !utf8.ValidString(shown) {
				t.Errorf("shown text is not valid UTF-8: %q", shown)
			}
			if got := strings.HasPrefix(shown, "…"); got != tc.wantStart {
				t.Errorf("leading … = %v, want %v", got, tc.wantStart)
			}
			if got := strings.HasSuffix(shown, "…"); got != tc.wantEnd {
				t.Errorf("trailing … = %v, want %v", got, tc.wantEnd)
			}
			runes := []rune(shown)
			if len(pad) >= len(runes) || !strings.HasPrefix(string(runes[len(pad):]), tc.wantAt) {
				t.Errorf("caret after %d characters points at %q, want %q", len(pad), string(runes[min(len(pad), len(runes)):]), tc.wantAt)
			}
		})
	}
}

func TestValidateLongLineIsCut(t *testing.T) {
	prompt := strings.Repeat("do the thing. ", 100)
	src := "digraph ci {\n  start [shape=Mdiamond]\n  exit [shape=Msquare]\n" +
		`  work [prompt="` + prompt + `", max_retries=-1, label="` + prompt + `"]` +
		"\n  start -> work -> exit\n}\n"
	f := writeFiles(t, map[string]string{"ci.dot": src})["ci.dot"]
	code, out, _ := runV(f)
	if code != 1 {
		t.Fatalf("exit code %d, want 1:\n%s", code, out)
	}
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if utf8.RuneCountInString(l) > maxShownLine+20 && !strings.HasPrefix(l, f) {
			t.Errorf("line %d is %d characters long: %.80q…", i, len(l), l)
		}
		if strings.HasPrefix(l, "      4 | ") && i+1 < len(lines) {
			shown := []rune(strings.TrimPrefix(l, "      4 | "))
			caret := strings.Index(lines[i+1], "^") - len("        | ")
			if caret < 0 || caret >= len(shown) || !strings.HasPrefix(string(shown[caret:]), "-1,") {
				t.Errorf("caret does not point at the value -1:\n%s\n%s", l, lines[i+1])
			}
		}
	}
}
