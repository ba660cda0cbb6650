package gitops

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrNotInCommit reports a path the commit does not have.
var ErrNotInCommit = errors.New("path not in commit")

// ReadFileAt returns the content of path (slash-separated, repository
// relative) in commit rev, without touching any working tree. Local runs
// read pipelines and config this way so what runs is what HEAD holds,
// not whatever the user has unsaved in their editor.
func (g *Git) ReadFileAt(ctx context.Context, dir, rev, path string) ([]byte, error) {
	if err := checkRevPath(rev, path); err != nil {
		return nil, err
	}
	if !g.existsAt(ctx, dir, rev, path) {
		return nil, fmt.Errorf("gitops: %s in %s: %w", path, short(rev), ErrNotInCommit)
	}
	out, err := g.run(ctx, call{dir: dir, readOnly: true, args: []string{"cat-file", "blob", rev + ":" + path}})
	if err != nil {
		return nil, fmt.Errorf("gitops: read %s at %s: %w", path, short(rev), err)
	}
	return out, nil
}

// ListFilesAt lists the files directly inside directory sub of commit rev,
// as repository-relative slash paths in git's order.
func (g *Git) ListFilesAt(ctx context.Context, dir, rev, sub string) ([]string, error) {
	if err := checkRevPath(rev, sub); err != nil {
		return nil, err
	}
	out, err := g.run(ctx, call{dir: dir, readOnly: true,
		args: []string{"ls-tree", "-z", "--name-only", "--end-of-options", rev, "--", strings.TrimSuffix(sub, "/") + "/"}})
	if err != nil {
		return nil, fmt.Errorf("gitops: list %s at %s: %w", sub, short(rev), err)
	}
	return splitNul(out), nil
}

func (g *Git) existsAt(ctx context.Context, dir, rev, path string) bool {
	_, err := g.run(ctx, call{dir: dir, readOnly: true, args: []string{"cat-file", "-e", rev + ":" + path}})
	return err == nil
}

func checkRevPath(rev, path string) error {
	if rev == "" || strings.HasPrefix(rev, "-") || strings.ContainsAny(rev, ": \n") {
		return fmt.Errorf("gitops: invalid revision %q", rev)
	}
	if path == "" || strings.HasPrefix(path, "/") || strings.Contains(path, "\n") {
		return fmt.Errorf("gitops: invalid path %q", path)
	}
	return nil
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
