package gitops

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
)

// ErrNotInCommit reports a path the commit does not have.
var ErrNotInCommit = errors.New("path not in commit")

// TooLargeError is a file over the size a caller of ReadFileAt accepts:
// the same error safefile gives for a file on disk.
type TooLargeError = safefile.TooLargeError

// ReadFileAt returns the content of path (slash-separated, repository
// relative) in commit rev, without touching any working tree. Local runs
// read pipelines and config this way so what runs is what HEAD holds,
// not whatever the user has unsaved in their editor. A file over max bytes
// is a *TooLargeError, found from its size before any of it is read.
func (g *Git) ReadFileAt(ctx context.Context, dir, rev, path string, max int64) ([]byte, error) {
	if err := checkRevPath(rev, path); err != nil {
		return nil, err
	}
	size, ok := g.sizeAt(ctx, dir, rev, path)
	if !ok {
		return nil, fmt.Errorf("gitops: %s in %s: %w", path, short(rev), ErrNotInCommit)
	}
	if size > max {
		return nil, &TooLargeError{Name: path, Size: size, Max: max}
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

// sizeAt is the size of path's object in rev; ok is false when rev has no
// such path.
func (g *Git) sizeAt(ctx context.Context, dir, rev, path string) (int64, bool) {
	out, err := g.run(ctx, call{dir: dir, readOnly: true, args: []string{"cat-file", "-s", rev + ":" + path}})
	if err != nil {
		return 0, false
	}
	size, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	return size, err == nil
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
