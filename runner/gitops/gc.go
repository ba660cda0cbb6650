package gitops

import (
	"context"
	"fmt"
)

// DeleteRunBranch deletes a run branch whatever it holds: what `kilroy-bot
// gc` does to the branches of old runs. Like DeleteUnusedRunBranch it
// refuses a branch outside the bot's namespace and one checked out in a
// worktree, and deletes with compare-and-delete at the tip it read. A
// missing branch is not an error (deleted is false).
func (g *Git) DeleteRunBranch(ctx context.Context, repoDir, branch string) (deleted bool, err error) {
	if err := g.checkRunBranch(ctx, repoDir, branch); err != nil {
		return false, err
	}
	tip, err := g.BranchTip(ctx, repoDir, branch)
	if err != nil || tip == "" {
		return false, err
	}
	if dir, ok, err := g.checkedOutIn(ctx, repoDir, branch); err != nil || ok {
		if err == nil {
			err = fmt.Errorf("gitops: branch %s is checked out in %s: remove that worktree first", branch, dir)
		}
		return false, err
	}
	if _, err := g.run(ctx, call{dir: repoDir, args: []string{"update-ref", "-d", "refs/heads/" + branch, tip}}); err != nil {
		return false, fmt.Errorf("gitops: delete branch %s: %w", branch, err)
	}
	return true, nil
}
