package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// A newcomer edits .kilroy/ci.dot and runs again: the run reads HEAD, so
// it says in one line that the edit is not in it. Edits elsewhere, and a
// clean .kilroy/, say nothing.
func TestRunSaysKilroyEditsAreUnseen(t *testing.T) {
	dot := dotFor(`  check [shape=octagon, command="true"]
  start -> check -> exit`)
	tests := []struct {
		name  string
		edit  map[string]string // written after the commit
		want  string            // "" for no such line
		lines int
	}{
		{name: "clean"},
		{name: "edit outside .kilroy", edit: map[string]string{"main.go": "package main\n"}},
		{
			name:  "edited pipeline",
			edit:  map[string]string{".kilroy/ci.dot": dot + "// edited\n"},
			want:  "kilroy-bot run: uncommitted changes to .kilroy/ci.dot are not in this run, which reads HEAD: commit them to run them",
			lines: 1,
		},
		{
			name: "many new files",
			edit: map[string]string{".kilroy/a.dot": "x", ".kilroy/b.dot": "x", ".kilroy/c.dot": "x", ".kilroy/d.dot": "x",
				".kilroy/config.yml": "x"},
			want:  "uncommitted changes to .kilroy/a.dot, .kilroy/b.dot, .kilroy/c.dot and 2 more are not in this run",
			lines: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := newRepo(t, map[string]string{".kilroy/ci.dot": dot, "main.go": "package main\n\nfunc main() {}\n"})
			for p, c := range tt.edit {
				writeTree(t, filepath.Join(repo, filepath.FromSlash(p)), c)
			}
			code, _, stderr := runCmd("run", "--repo", repo, "--graph", "ci", "--data-dir", t.TempDir(), "--no-sandbox")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if got := strings.Count(stderr, "uncommitted changes"); got != tt.lines {
				t.Errorf("%d lines about uncommitted changes, want %d:\n%s", got, tt.lines, stderr)
			}
			if tt.want != "" && !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr does not say %q:\n%s", tt.want, stderr)
			}
		})
	}
}
