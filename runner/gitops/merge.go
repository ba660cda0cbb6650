package gitops

import (
	"context"
	"errors"
	"fmt"
)

// MergeBranches merges branches into the worktree's current branch, one
// by one in the order given, which the caller keeps stable (for example
// the fan-out's declaration order) so the result does not depend on which
// branch finished first. On a conflict the merge is aborted, the branch is
// reset to where it was before the first merge, and a *MergeConflictError
// names the branch and the conflicted paths. Returns the final HEAD SHA.
func (g *Git) MergeBranches(ctx context.Context, worktree string, branches []string) (string, error) {
	start, err := g.ResolveRef(ctx, worktree, "HEAD")
	if err != nil {
		return "", fmt.Errorf("gitops: merge: %w", err)
	}
	env, err := g.authorEnv(ctx, worktree)
	if err != nil {
		return "", err
	}
	for _, b := range branches {
		if err := g.mergeOne(ctx, worktree, b, env); err != nil {
			return "", g.rollBack(ctx, worktree, start, err)
		}
	}
	return g.ResolveRef(ctx, worktree, "HEAD")
}

func (g *Git) mergeOne(ctx context.Context, worktree, branch string, env []string) error {
	ref := "refs/heads/" + branch
	_, err := g.run(ctx, call{dir: worktree, pinned: true, env: env,
		args: []string{"merge", "--quiet", "--no-edit", "--no-verify", "--no-ff", "-m", "kilroy: merge " + branch, "--end-of-options", ref}})
	if err == nil {
		return nil
	}
	paths, lsErr := g.conflictedPaths(ctx, worktree)
	if lsErr != nil {
		return errors.Join(fmt.Errorf("gitops: merge %s: %w", branch, err), lsErr)
	}
	if len(paths) > 0 {
		return &MergeConflictError{Branch: branch, Paths: paths}
	}
	return fmt.Errorf("gitops: merge %s: %w", branch, err)
}

// conflictedPaths lists the unmerged index entries.
func (g *Git) conflictedPaths(ctx context.Context, worktree string) ([]string, error) {
	out, err := g.run(ctx, call{dir: worktree, pinned: true, readOnly: true,
		args: []string{"diff", "--name-only", "-z", "--diff-filter=U", "--no-ext-diff"}})
	if err != nil {
		return nil, fmt.Errorf("gitops: list conflicts: %w", err)
	}
	return sortUnique(splitNul(out)), nil
}

// rollBack aborts a half-done merge and moves the branch back to start,
// keeping uncommitted changes that predate the merge (reset --keep).
func (g *Git) rollBack(ctx context.Context, worktree, start string, cause error) error {
	// merge --abort fails when no merge is in progress; that is fine.
	_, _ = g.run(ctx, call{dir: worktree, pinned: true, args: []string{"merge", "--abort"}})
	if _, err := g.run(ctx, call{dir: worktree, pinned: true, args: []string{"reset", "--quiet", "--keep", start}}); err != nil {
		return errors.Join(cause, fmt.Errorf("gitops: reset after failed merge: %w", err))
	}
	return cause
}
