package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
)

const (
	globMaxResults  = 500
	globOutputLimit = 20_000
)

// globTool lists files by doublestar pattern, newest first.
type globTool struct{ ws *workspace }

func (globTool) spec() ToolSpec {
	return ToolSpec{
		Name:        "glob",
		Description: "Find files of the worktree by glob pattern (doublestar: ** matches directories). Newest first.",
		Schema: schema([]string{"pattern"}, map[string]any{
			"pattern": prop("string", `glob pattern such as "**/*.go"`),
			"path":    prop("string", "directory to search, relative to the worktree (default: the worktree)"),
		}),
	}
}

func (t globTool) run(_ context.Context, raw json.RawMessage) (string, error) {
	var a struct {
		Pattern string `json:"pattern"`
		Path    string `json:"path"`
	}
	if err := decodeArgs(raw, &a, "pattern"); err != nil {
		return "", err
	}
	if !doublestar.ValidatePattern(a.Pattern) || strings.HasPrefix(a.Pattern, "/") || slices.Contains(strings.Split(a.Pattern, "/"), "..") {
		return "", fmt.Errorf("invalid pattern %q: use a relative doublestar pattern such as **/*.go", a.Pattern)
	}
	base, err := t.ws.rel(a.Path)
	if err != nil {
		return "", err
	}
	fsys := t.ws.root.FS()
	type hit struct {
		path string
		mod  time.Time
	}
	var hits []hit
	err = doublestar.GlobWalk(fsys, path.Join(filepathToSlash(base), a.Pattern), func(p string, d fs.DirEntry) error {
		if d.IsDir() || underGitDir(p) {
			return nil
		}
		var mod time.Time
		if fi, err := d.Info(); err == nil {
			mod = fi.ModTime()
		}
		hits = append(hits, hit{p, mod})
		return nil
	})
	if err != nil {
		return "", explain(a.Path, err)
	}
	if len(hits) == 0 {
		return "no files match", nil
	}
	slices.SortFunc(hits, func(x, y hit) int {
		if c := y.mod.Compare(x.mod); c != 0 {
			return c
		}
		return strings.Compare(x.path, y.path)
	})
	var b strings.Builder
	for i, h := range hits {
		if i == globMaxResults {
			fmt.Fprintf(&b, "[%d more files; narrow the pattern]\n", len(hits)-globMaxResults)
			break
		}
		b.WriteString(h.path + "\n")
	}
	return truncate(b.String(), globOutputLimit, tailOnly), nil
}

func filepathToSlash(p string) string { return strings.ReplaceAll(p, "\\", "/") }

// underGitDir reports whether p is inside a .git directory, which the
// search tools skip: it is the bot's, not the project's.
func underGitDir(p string) bool {
	return slices.Contains(strings.Split(p, "/"), ".git")
}
