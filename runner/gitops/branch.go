package gitops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
)

// BranchTip returns the commit branch points at in repoDir, or "" when
// repoDir has no such branch.
func (g *Git) BranchTip(ctx context.Context, repoDir, branch string) (string, error) {
	sha, err := g.runStr(ctx, call{dir: repoDir, readOnly: true,
		args: []string{"rev-parse", "--verify", "--quiet", "--end-of-options", "refs/heads/" + branch}})
	var gerr *Error
	if errors.As(err, &gerr) && gerr.ExitCode == 1 && gerr.cause == nil {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("gitops: branch %s in %s: %w", branch, repoDir, err)
	}
	return sha, nil
}

// DeleteUnusedRunBranch deletes a run branch that never got a commit: one
// that still points at startSHA, the commit its run started from. It is
// what undoes AddWorktree's branch when a run fails before its first
// checkpoint, so it deletes nothing anybody could want: a branch outside
// the bot's namespace is refused, a branch checked out in a worktree is
// refused, and a branch that moved on (it holds checkpoints, or somebody
// committed to it) is kept and reported as not deleted. A missing branch
// is not an error.
//
// Unlike `git branch -D`, the deletion is a compare-and-delete
// (`git update-ref -d REF OLD`), so a commit that lands between the check
// and the delete makes it fail instead of being lost.
func (g *Git) DeleteUnusedRunBranch(ctx context.Context, repoDir, branch, startSHA string) (deleted bool, err error) {
	if err := g.checkRunBranch(ctx, repoDir, branch); err != nil {
		return false, err
	}
	tip, err := g.BranchTip(ctx, repoDir, branch)
	if err != nil || tip == "" || tip != startSHA {
		return false, err
	}
	if dir, ok, err := g.checkedOutIn(ctx, repoDir, branch); err != nil || ok {
		if err == nil {
			err = fmt.Errorf("gitops: branch %s is checked out in %s: remove that worktree first", branch, dir)
		}
		return false, err
	}
	ref := "refs/heads/" + branch
	if _, err := g.run(ctx, call{dir: repoDir, args: []string{"update-ref", "-d", ref, startSHA}}); err != nil {
		return false, fmt.Errorf("gitops: delete branch %s at %s: %w", branch, startSHA, err)
	}
	return true, nil
}

// checkedOutIn reports the worktree of repoDir that has branch checked
// out, if any.
func (g *Git) checkedOutIn(ctx context.Context, repoDir, branch string) (dir string, ok bool, err error) {
	out, err := g.run(ctx, call{dir: repoDir, readOnly: true, args: []string{"worktree", "list", "--porcelain", "-z"}})
	if err != nil {
		return "", false, fmt.Errorf("gitops: list worktrees of %s: %w", repoDir, err)
	}
	want := []byte("branch refs/heads/" + branch)
	var current []byte
	for _, field := range bytes.Split(out, []byte{0}) {
		if p, found := bytes.CutPrefix(field, []byte("worktree ")); found {
			current = p
		}
		if bytes.Equal(field, want) {
			return string(current), true, nil
		}
	}
	return "", false, nil
}
