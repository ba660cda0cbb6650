package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
)

const (
	// toolReadMaxBytes caps the files read_file and edit_file load: the
	// worktree is the pull request's, and a FIFO or a huge sparse file in
	// it must not block or exhaust the bot.
	toolReadMaxBytes = 16 << 20
	readDefaultLimit = 2000
	readOutputLimit  = 50_000
)

// readFile returns numbered lines, "N | text", so the model can cite and
// edit by line; writeFile strips the numbers again when they leak back.
type readFile struct{ ws *workspace }

func (readFile) spec() ToolSpec {
	return ToolSpec{
		Name:        "read_file",
		Description: "Read a text file of the worktree. Returns numbered lines as \"N | text\"; the numbers are not part of the file.",
		Schema: schema([]string{"path"}, map[string]any{
			"path":   prop("string", "file path, relative to the worktree"),
			"offset": prop("integer", "first line to return, 1-based (default 1)"),
			"limit":  prop("integer", fmt.Sprintf("most lines to return (default %d)", readDefaultLimit)),
		}),
	}
}

func (t readFile) run(_ context.Context, raw json.RawMessage) (string, error) {
	var a struct {
		Path   string `json:"path"`
		Offset int    `json:"offset"`
		Limit  int    `json:"limit"`
	}
	if err := decodeArgs(raw, &a, "path"); err != nil {
		return "", err
	}
	rel, err := t.ws.rel(a.Path)
	if err != nil {
		return "", err
	}
	b, err := safefile.ReadFile(t.ws.root, rel, toolReadMaxBytes)
	if err != nil {
		return "", explain(a.Path, err)
	}
	if bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0 {
		return "", fmt.Errorf("%s looks binary; read_file reads text", a.Path)
	}
	if len(b) == 0 {
		return "(empty file)", nil
	}
	return truncate(numberLines(string(b), max(a.Offset, 1), orInt(a.Limit, readDefaultLimit)), readOutputLimit, headTail), nil
}

// numberLines renders lines [from, from+limit) of s with their numbers.
func numberLines(s string, from, limit int) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if from > len(lines) {
		return fmt.Sprintf("(the file has %d lines; offset %d is past the end)", len(lines), from)
	}
	to := min(len(lines), from-1+limit)
	width := len(fmt.Sprint(to))
	var b strings.Builder
	for i := from - 1; i < to; i++ {
		fmt.Fprintf(&b, "%*d | %s\n", width, i+1, lines[i])
	}
	if to < len(lines) {
		fmt.Fprintf(&b, "(lines %d-%d of %d; use offset=%d to read on)\n", from, to, len(lines), to+1)
	}
	return b.String()
}

func orInt(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}
