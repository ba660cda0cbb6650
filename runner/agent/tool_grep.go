package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
)

const (
	grepDefaultResults = 100
	grepMaxResults     = 1000
	grepMaxFileBytes   = 4 << 20 // larger files are generated or data, not code
	grepOutputLimit    = 20_000
	grepMaxLineShown   = 500
)

// errEnough stops the walk once enough matches were found.
var errEnough = errors.New("enough matches")

// grepTool searches file contents by regular expression (Go syntax).
type grepTool struct{ ws *workspace }

func (grepTool) spec() ToolSpec {
	return ToolSpec{
		Name:        "grep",
		Description: "Search the worktree's text files by regular expression (Go RE2 syntax). Returns path:line: text.",
		Schema: schema([]string{"pattern"}, map[string]any{
			"pattern":          prop("string", "regular expression"),
			"path":             prop("string", "file or directory to search, relative to the worktree (default: the worktree)"),
			"glob_filter":      prop("string", `only files whose path matches this doublestar pattern, e.g. "**/*.go"`),
			"case_insensitive": prop("boolean", "ignore case (default false)"),
			"max_results":      prop("integer", fmt.Sprintf("most matching lines to return (default %d)", grepDefaultResults)),
		}),
	}
}

type grepArgs struct {
	Pattern         string `json:"pattern"`
	Path            string `json:"path"`
	GlobFilter      string `json:"glob_filter"`
	CaseInsensitive bool   `json:"case_insensitive"`
	MaxResults      int    `json:"max_results"`
}

func (t grepTool) run(ctx context.Context, raw json.RawMessage) (string, error) {
	var a grepArgs
	if err := decodeArgs(raw, &a, "pattern"); err != nil {
		return "", err
	}
	expr := a.Pattern
	if a.CaseInsensitive {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return "", fmt.Errorf("invalid regular expression: %w", err)
	}
	if a.GlobFilter != "" && !doublestar.ValidatePattern(a.GlobFilter) {
		return "", fmt.Errorf("invalid glob_filter %q", a.GlobFilter)
	}
	base, err := t.ws.rel(a.Path)
	if err != nil {
		return "", err
	}
	limit := min(orInt(a.MaxResults, grepDefaultResults), grepMaxResults)
	var out []string
	err = fs.WalkDir(t.ws.root.FS(), filepathToSlash(base), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable or escaping entries are skipped
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return fs.SkipDir
			}
			return nil
		}
		if a.GlobFilter != "" && !globMatch(a.GlobFilter, p) {
			return nil
		}
		out = t.grepFile(p, re, out, limit)
		if len(out) >= limit {
			return errEnough
		}
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return "", explain(a.Path, err)
	}
	if len(out) == 0 {
		return "no matches", nil
	}
	s := strings.Join(out, "\n") + "\n"
	if len(out) >= limit {
		s += fmt.Sprintf("[stopped at %d matches; narrow the pattern or path]\n", limit)
	}
	return truncate(s, grepOutputLimit, tailOnly), nil
}

// globMatch matches the filter against the whole path, and a pattern
// without a slash against the base name too ("*.go" finds a/b.go).
func globMatch(pattern, p string) bool {
	if ok, _ := doublestar.Match(pattern, p); ok {
		return true
	}
	ok, _ := doublestar.Match(pattern, path.Base(p))
	return !strings.Contains(pattern, "/") && ok
}

func (t grepTool) grepFile(p string, re *regexp.Regexp, out []string, limit int) []string {
	b, err := safefile.ReadFile(t.ws.root, p, grepMaxFileBytes)
	if err != nil || bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0 {
		return out // not a regular file, too large, unreadable or binary
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), grepMaxFileBytes)
	for n := 1; sc.Scan() && len(out) < limit; n++ {
		if line := sc.Text(); re.MatchString(line) {
			if len(line) > grepMaxLineShown {
				line = line[:grepMaxLineShown] + "…"
			}
			out = append(out, fmt.Sprintf("%s:%d: %s", p, n, line))
		}
	}
	return out
}
