package agent

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// workspace is the worktree the API tools work in. Every file operation
// goes through an os.Root, which refuses any path, symlink included, that
// leads outside it; paths with ".." are refused before that, so a model
// is told plainly instead of getting an OS error.
type workspace struct {
	dir  string // absolute, as given
	real string // dir with symlinks resolved, for absolute paths the model built from it
	// seen is where the shell tool's processes see dir (a jail's fixed
	// path), whose absolute paths the model repeats; "" when at dir.
	seen string
	root *os.Root
}

func openWorkspace(dir string) (*workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	return &workspace{dir: abs, real: real, root: root}, nil
}

func (w *workspace) Close() error { return w.root.Close() }

// errOutside is the refusal of a path outside the worktree.
var errOutside = errors.New("outside the worktree")

// rel turns a tool path (relative to the worktree, or absolute inside it)
// into a clean path relative to the root. Empty means the worktree itself.
func (w *workspace) rel(p string) (string, error) {
	if p == "" {
		return ".", nil
	}
	for _, part := range strings.Split(filepath.ToSlash(p), "/") {
		if part == ".." {
			return "", fmt.Errorf("%s: \"..\" is not allowed; use a path inside the worktree: %w", p, errOutside)
		}
	}
	if !filepath.IsAbs(p) {
		return filepath.Clean(p), nil
	}
	for _, base := range []string{w.seen, w.dir, w.real} {
		if base == "" {
			continue
		}
		if r, err := filepath.Rel(base, filepath.Clean(p)); err == nil && r != ".." && !strings.HasPrefix(r, "../") {
			return r, nil
		}
	}
	return "", fmt.Errorf("%s is %w (%s)", p, errOutside, cmp.Or(w.seen, w.dir))
}

// explain rewrites the os.Root error for a path that escapes, naming the
// usual cause.
func explain(p string, err error) error {
	if err != nil && strings.Contains(err.Error(), "escapes") {
		return fmt.Errorf("%s leads %w through a symlink or an absolute link; refused", p, errOutside)
	}
	return err
}

// display is how a root-relative path is shown back to the model.
func display(rel string) string {
	return filepath.ToSlash(rel)
}
