package gitops

import (
	"context"
	"testing"
)

// TestDeleteRunBranch: a run branch with checkpoints is deleted once its
// worktree is gone; main, a checked-out branch and a missing one are not.
func TestDeleteRunBranch(t *testing.T) {
	ctx := context.Background()
	g := newTestGit(t)
	repo := newRepo(t, g, map[string]string{"a.txt": "a\n"})
	wt, branch, _ := newRun(t, g, repo)
	mustGit(t, g, wt, "commit", "--allow-empty", "-m", "checkpoint")

	if _, err := g.DeleteRunBranch(ctx, repo, "main"); err == nil {
		t.Error("deleting main: no error, want a refusal outside the bot's namespace")
	}
	if _, err := g.DeleteRunBranch(ctx, repo, branch); err == nil {
		t.Error("deleting a branch checked out in a worktree: no error")
	}
	if err := g.RemoveWorktree(ctx, repo, wt); err != nil {
		t.Fatal(err)
	}
	if deleted, err := g.DeleteRunBranch(ctx, repo, branch); err != nil || !deleted {
		t.Fatalf("DeleteRunBranch = %v, %v; want deleted", deleted, err)
	}
	if tip, err := g.BranchTip(ctx, repo, branch); err != nil || tip != "" {
		t.Errorf("BranchTip after delete = %q, %v; want no branch", tip, err)
	}
	if deleted, err := g.DeleteRunBranch(ctx, repo, branch); err != nil || deleted {
		t.Errorf("deleting it again = %v, %v; want nothing to do", deleted, err)
	}
}
