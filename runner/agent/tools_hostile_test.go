package agent

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestToolsHostileFiles: a FIFO or a huge sparse file in the worktree is
// refused by read_file, edit_file and grep with a reason, without blocking
// or loading it.
func TestToolsHostileFiles(t *testing.T) {
	tests := []struct {
		name string
		tool string
		args map[string]any
		want string // in the result
		err  bool
	}{
		{"read fifo", "read_file", map[string]any{"path": "pipe"}, "not a regular file", true},
		{"read huge", "read_file", map[string]any{"path": "huge"}, "over the 16777216-byte limit", true},
		{"edit fifo", "edit_file", map[string]any{"path": "pipe", "old_string": "a", "new_string": "b"}, "not a regular file", true},
		{"edit huge", "edit_file", map[string]any{"path": "huge", "old_string": "a", "new_string": "b"}, "over the 16777216-byte limit", true},
		{"grep skips both", "grep", map[string]any{"pattern": "package"}, "main.go:1: package main", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb, dir := testTools(t)
			if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
				t.Fatal(err)
			}
			writeFileT(t, filepath.Join(dir, "huge"), "package huge\n")
			if err := os.Truncate(filepath.Join(dir, "huge"), 8<<30); err != nil {
				t.Fatal(err)
			}
			done := make(chan ToolResult, 1)
			go func() { done <- call(t, tb, tt.tool, tt.args) }()
			var r ToolResult
			select {
			case r = <-done:
			case <-time.After(time.Minute):
				t.Fatal("the tool hung")
			}
			if r.IsError != tt.err || !strings.Contains(r.Content, tt.want) {
				t.Errorf("IsError %v, content %q; want %v with %q", r.IsError, r.Content, tt.err, tt.want)
			}
		})
	}
}
