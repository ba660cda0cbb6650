package gitops

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// RepoRoot returns the top-level directory of the repository containing
// dir. Outside a repository the error wraps ErrNotRepository and says how
// to fix it.
func (g *Git) RepoRoot(ctx context.Context, dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("gitops: repo dir %q: %w", dir, err)
	}
	out, err := g.runStr(ctx, call{dir: abs, readOnly: true, args: []string{"rev-parse", "--show-toplevel"}})
	var gerr *Error
	if errors.As(err, &gerr) && strings.Contains(gerr.Stderr, "not a git repository") {
		return "", fmt.Errorf("%w (%s): run inside a git repository or pass --repo", ErrNotRepository, abs)
	}
	if err != nil {
		return "", fmt.Errorf("gitops: repo root of %s: %w", abs, err)
	}
	return out, nil
}

// HeadSHA returns the commit HEAD of dir points at.
func (g *Git) HeadSHA(ctx context.Context, dir string) (string, error) {
	sha, err := g.ResolveRef(ctx, dir, "HEAD")
	var gerr *Error
	if errors.As(err, &gerr) && gerr.ExitCode == 1 && gerr.Stderr == "" && !gerr.TimedOut {
		// rev-parse --verify --quiet says nothing and exits 1 when HEAD
		// resolves to no commit: the branch it names was never committed to.
		return "", fmt.Errorf("%s has %w (a repository needs at least one commit)", dir, ErrNoCommit)
	}
	if err != nil {
		return "", fmt.Errorf("gitops: HEAD of %s: %w", dir, err)
	}
	return sha, nil
}

// ResolveRef resolves a revision (branch, tag, SHA, HEAD) in dir to a
// full commit SHA.
func (g *Git) ResolveRef(ctx context.Context, dir, ref string) (string, error) {
	if ref == "" || strings.HasPrefix(ref, "-") {
		return "", fmt.Errorf("gitops: invalid revision %q", ref)
	}
	sha, err := g.runStr(ctx, call{dir: dir, readOnly: true,
		args: []string{"rev-parse", "--verify", "--quiet", "--end-of-options", ref + "^{commit}"}})
	if err != nil {
		return "", fmt.Errorf("gitops: resolve %q in %s: %w", ref, dir, err)
	}
	return sha, nil
}

// IsIndexDirty reports whether the index of dir has staged changes against
// HEAD. It neither refreshes nor locks the index.
func (g *Git) IsIndexDirty(ctx context.Context, dir string) (bool, error) {
	_, err := g.run(ctx, call{dir: dir, readOnly: true,
		args: []string{"diff-index", "--cached", "--quiet", "--ignore-submodules=none", "HEAD", "--"}})
	var gerr *Error
	if errors.As(err, &gerr) && gerr.ExitCode == 1 && gerr.cause == nil {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("gitops: check index of %s: %w", dir, err)
	}
	return false, nil
}
