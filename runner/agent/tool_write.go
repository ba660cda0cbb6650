package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
)

// writeFile creates or replaces a file of the worktree.
type writeFile struct{ ws *workspace }

func (writeFile) spec() ToolSpec {
	return ToolSpec{
		Name:        "write_file",
		Description: "Create or replace a file of the worktree with the given content (parent directories are created). Write the file's text only, without read_file's line numbers.",
		Schema: schema([]string{"path", "content"}, map[string]any{
			"path":    prop("string", "file path, relative to the worktree"),
			"content": prop("string", "the complete new content"),
		}),
	}
}

func (t writeFile) run(_ context.Context, raw json.RawMessage) (string, error) {
	var a struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	if err := decodeArgs(raw, &a, "path", "content"); err != nil {
		return "", err
	}
	rel, err := t.ws.rel(a.Path)
	if err != nil {
		return "", err
	}
	if rel == "." {
		return "", fmt.Errorf("path %q names the worktree itself; give a file path", a.Path)
	}
	content := stripLineNumbers(a.Content)
	if err := t.ws.writeKeepMode(rel, []byte(content)); err != nil {
		return "", explain(a.Path, err)
	}
	note := ""
	if len(content) != len(a.Content) {
		note = " (read_file line numbers removed)"
	}
	return fmt.Sprintf("wrote %d bytes to %s%s", len(content), display(rel), note), nil
}

// writeKeepMode writes data to rel, creating parents, and keeps the mode
// of an existing file (an executable script stays executable).
func (w *workspace) writeKeepMode(rel string, data []byte) error {
	perm := fs.FileMode(0o644)
	if fi, err := w.root.Stat(rel); err == nil {
		if fi.IsDir() {
			return fmt.Errorf("%s is a directory", display(rel))
		}
		perm = fi.Mode().Perm()
	}
	if dir := filepath.Dir(rel); dir != "." {
		if err := w.root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return w.root.WriteFile(rel, data, perm)
}
