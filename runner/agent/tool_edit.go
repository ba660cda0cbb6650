package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
)

// editFile replaces an exact string. It refuses an old string that is
// missing or ambiguous instead of guessing: the model re-reads the file
// and sends more context.
type editFile struct{ ws *workspace }

func (editFile) spec() ToolSpec {
	return ToolSpec{
		Name:        "edit_file",
		Description: "Replace an exact text in a file of the worktree. old_string must occur exactly once unless replace_all is true; include surrounding lines to make it unique. Do not include read_file's line numbers.",
		Schema: schema([]string{"path", "old_string", "new_string"}, map[string]any{
			"path":        prop("string", "file path, relative to the worktree"),
			"old_string":  prop("string", "the exact text to replace"),
			"new_string":  prop("string", "the replacement text"),
			"replace_all": prop("boolean", "replace every occurrence (default false)"),
		}),
	}
}

func (t editFile) run(_ context.Context, raw json.RawMessage) (string, error) {
	var a struct {
		Path       string `json:"path"`
		OldString  string `json:"old_string"`
		NewString  string `json:"new_string"`
		ReplaceAll bool   `json:"replace_all"`
	}
	if err := decodeArgs(raw, &a, "path", "old_string", "new_string"); err != nil {
		return "", err
	}
	if a.OldString == "" {
		return "", errors.New("old_string is empty; use write_file to create a file")
	}
	rel, err := t.ws.rel(a.Path)
	if err != nil {
		return "", err
	}
	b, err := safefile.ReadFile(t.ws.root, rel, toolReadMaxBytes)
	if err != nil {
		return "", explain(a.Path, err)
	}
	text := string(b)
	n := strings.Count(text, a.OldString)
	switch {
	case n == 0:
		return "", fmt.Errorf("old_string was not found in %s; read the file again and copy the text exactly (without line numbers)", display(rel))
	case n > 1 && !a.ReplaceAll:
		return "", fmt.Errorf("old_string occurs %d times in %s; include more surrounding text to make it unique, or set replace_all", n, display(rel))
	}
	if !a.ReplaceAll {
		n = 1
	}
	text = strings.Replace(text, a.OldString, a.NewString, n)
	if err := t.ws.writeKeepMode(rel, []byte(text)); err != nil {
		return "", explain(a.Path, err)
	}
	return fmt.Sprintf("replaced %d occurrence(s) in %s", n, display(rel)), nil
}
