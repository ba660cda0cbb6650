package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testTools is the API toolbox over a fresh worktree holding main.go.
func testTools(t *testing.T) (*toolbox, string) {
	t.Helper()
	dir := t.TempDir()
	writeFileT(t, filepath.Join(dir, "main.go"), "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n")
	ws, err := openWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	ws.seen = "/workspace" // where a jail shows it
	env := []string{"PATH=" + testHost(t)["PATH"]}
	return newToolbox(readFile{ws}, writeFile{ws}, editFile{ws},
		shellTool{dir: dir, env: env, timeout: 10 * time.Second, maxTimeout: 20 * time.Second},
		globTool{ws}, grepTool{ws}), dir
}

func call(t *testing.T, tb *toolbox, name string, args any) ToolResult {
	t.Helper()
	var raw string
	if s, ok := args.(string); ok {
		raw = s
	} else {
		b, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		raw = string(b)
	}
	return tb.call(context.Background(), ToolCall{ID: "c1", Name: name, Args: raw})
}

func TestTools(t *testing.T) {
	tests := []struct {
		name    string
		tool    string
		args    any
		wantErr bool
		want    []string // substrings of the result
	}{
		{"read numbered", "read_file", map[string]any{"path": "main.go"}, false, []string{"1 | package main", "4 | \tprintln(\"hello\")"}},
		{"read range", "read_file", map[string]any{"path": "main.go", "offset": 3, "limit": 1}, false, []string{"3 | func main() {", "use offset=4"}},
		{"read absolute inside", "read_file", map[string]any{"path": "$WS/main.go"}, false, []string{"1 | package main"}},
		{"read missing", "read_file", map[string]any{"path": "nope.go"}, true, []string{"nope.go"}},
		{"read dotdot", "read_file", map[string]any{"path": "../outside"}, true, []string{`".." is not allowed`}},
		{"read absolute as the shell sees it", "read_file", map[string]any{"path": "/workspace/main.go"}, false, []string{"1 | package main"}},
		{"read absolute outside", "read_file", map[string]any{"path": "/etc/passwd"}, true, []string{"outside the worktree (/workspace)"}},
		{"edit unique", "edit_file", map[string]any{"path": "main.go", "old_string": `"hello"`, "new_string": `"bye"`}, false, []string{"replaced 1"}},
		{"edit missing", "edit_file", map[string]any{"path": "main.go", "old_string": "nothere", "new_string": "x"}, true, []string{"not found"}},
		{"edit ambiguous", "edit_file", map[string]any{"path": "main.go", "old_string": "main", "new_string": "x"}, true, []string{"occurs 2 times"}},
		{"edit all", "edit_file", map[string]any{"path": "main.go", "old_string": "main", "new_string": "x", "replace_all": true}, false, []string{"replaced 2"}},
		{"write strips numbers", "write_file", map[string]any{"path": "sub/new.go", "content": "1 | package sub\n2 | \n3 | var X = 1\n"}, false, []string{"wrote", "line numbers removed"}},
		{"write worktree itself", "write_file", map[string]any{"path": ".", "content": "x"}, true, []string{"worktree itself"}},
		{"shell", "shell", map[string]any{"command": "echo out; echo err >&2; exit 3"}, false, []string{"exit code 3", "out", "err"}},
		{"shell timeout", "shell", map[string]any{"command": "sleep 30", "timeout_ms": 200}, false, []string{"timed out"}},
		{"glob", "glob", map[string]any{"pattern": "**/*.go"}, false, []string{"main.go"}},
		{"glob none", "glob", map[string]any{"pattern": "**/*.rs"}, false, []string{"no files match"}},
		{"glob dotdot", "glob", map[string]any{"pattern": "../*"}, true, []string{"invalid pattern"}},
		{"grep", "grep", map[string]any{"pattern": "print(ln)?", "glob_filter": "*.go"}, false, []string{"main.go:4:"}},
		{"grep ignore case", "grep", map[string]any{"pattern": "PACKAGE", "case_insensitive": true}, false, []string{"main.go:1: package main"}},
		{"grep bad regexp", "grep", map[string]any{"pattern": "("}, true, []string{"invalid regular expression"}},
		{"malformed json", "read_file", `{"path": "main.go"`, true, []string{"invalid arguments"}},
		{"wrong type", "read_file", `{"path": 5}`, true, []string{"invalid arguments"}},
		{"unknown field", "read_file", `{"path": "main.go", "lines": 3}`, true, []string{"invalid arguments"}},
		{"missing required", "edit_file", `{"path": "main.go"}`, true, []string{"missing old_string, new_string"}},
		{"unknown tool", "rm_rf", `{}`, true, []string{`unknown tool "rm_rf"`, "read_file, write_file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb, dir := testTools(t)
			if m, ok := tt.args.(map[string]any); ok {
				if p, ok := m["path"].(string); ok {
					m["path"] = strings.ReplaceAll(p, "$WS", dir)
				}
			}
			r := call(t, tb, tt.tool, tt.args)
			if r.IsError != tt.wantErr {
				t.Errorf("IsError = %v, want %v; content:\n%s", r.IsError, tt.wantErr, r.Content)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.Content, w) {
					t.Errorf("result lacks %q:\n%s", w, r.Content)
				}
			}
		})
	}
}

func TestToolEffects(t *testing.T) {
	tb, dir := testTools(t)
	if r := call(t, tb, "edit_file", map[string]any{"path": "main.go", "old_string": `"hello"`, "new_string": `"bye"`}); r.IsError {
		t.Fatal(r.Content)
	}
	if got := readFileT(t, filepath.Join(dir, "main.go")); !strings.Contains(got, `println("bye")`) || strings.Contains(got, "hello") {
		t.Errorf("main.go after edit:\n%s", got)
	}
	if r := call(t, tb, "write_file", map[string]any{"path": "sub/new.go", "content": "1 | package sub\n2 | \n3 | var X = 1\n"}); r.IsError {
		t.Fatal(r.Content)
	}
	if got, want := readFileT(t, filepath.Join(dir, "sub/new.go")), "package sub\n\nvar X = 1\n"; got != want {
		t.Errorf("written file = %q, want %q", got, want)
	}
	// An executable keeps its mode when rewritten.
	writeFileT(t, filepath.Join(dir, "run.sh"), "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if r := call(t, tb, "write_file", map[string]any{"path": "run.sh", "content": "#!/bin/sh\necho hi\n"}); r.IsError {
		t.Fatal(r.Content)
	}
	if fi, err := os.Stat(filepath.Join(dir, "run.sh")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("run.sh mode = %v, %v; want 0755", fi.Mode(), err)
	}
}

// Symlinks that lead out of the worktree are refused by every file tool;
// nothing outside is read or written.
func TestPathConfinement(t *testing.T) {
	tb, dir := testTools(t)
	outside := t.TempDir()
	writeFileT(t, filepath.Join(outside, "secret.txt"), "TOP SECRET\n")
	for name, target := range map[string]string{"link": outside, "file-link": filepath.Join(outside, "secret.txt")} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../"+filepath.Base(outside), filepath.Join(dir, "rel-link")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		tool string
		args map[string]any
	}{
		{"read_file", map[string]any{"path": "link/secret.txt"}},
		{"read_file", map[string]any{"path": "file-link"}},
		{"read_file", map[string]any{"path": "rel-link/secret.txt"}},
		{"read_file", map[string]any{"path": filepath.Join(outside, "secret.txt")}},
		{"read_file", map[string]any{"path": "sub/../../x"}},
		{"write_file", map[string]any{"path": "link/pwned.txt", "content": "x"}},
		{"write_file", map[string]any{"path": "file-link", "content": "x"}},
		{"write_file", map[string]any{"path": "../pwned.txt", "content": "x"}},
		{"edit_file", map[string]any{"path": "file-link", "old_string": "TOP", "new_string": "NOT"}},
		{"grep", map[string]any{"pattern": "SECRET", "path": "link"}},
		{"glob", map[string]any{"pattern": "*", "path": "link"}},
	}
	for _, c := range cases {
		r := call(t, tb, c.tool, c.args)
		if strings.Contains(r.Content, "TOP SECRET") || (!r.IsError && c.tool != "grep" && c.tool != "glob") {
			t.Errorf("%s %v = %+v; want a refusal", c.tool, c.args, r)
		}
		if (c.tool == "grep" || c.tool == "glob") && !r.IsError && !strings.HasPrefix(r.Content, "no ") {
			t.Errorf("%s %v found something outside: %s", c.tool, c.args, r.Content)
		}
	}
	// A search of the whole worktree does not follow the links out either.
	if r := call(t, tb, "grep", map[string]any{"pattern": "SECRET"}); strings.Contains(r.Content, "TOP SECRET") {
		t.Errorf("grep over the worktree followed a link out: %s", r.Content)
	}
	entries, err := os.ReadDir(outside)
	if err != nil || len(entries) != 1 {
		t.Errorf("outside dir now holds %v (%v); want only secret.txt", entries, err)
	}
	if got := readFileT(t, filepath.Join(outside, "secret.txt")); got != "TOP SECRET\n" {
		t.Errorf("secret.txt = %q", got)
	}
}
