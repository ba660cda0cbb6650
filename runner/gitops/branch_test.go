package gitops

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestDeleteUnusedRunBranch(t *testing.T) {
	ctx := context.Background()
	g := newTestGit(t)
	repo := newRepo(t, g, map[string]string{"a.txt": "a\n"})
	wt, branch, base := newRun(t, g, repo)

	if _, err := g.DeleteUnusedRunBranch(ctx, repo, "main", base); err == nil {
		t.Error("deleting main: no error, want a refusal outside the bot's namespace")
	}
	if _, err := g.DeleteUnusedRunBranch(ctx, repo, branch, base); err == nil {
		t.Error("deleting a branch checked out in a worktree: no error")
	}
	if err := g.RemoveWorktree(ctx, repo, wt); err != nil {
		t.Fatal(err)
	}
	other := mustGit(t, g, repo, "commit-tree", "-m", "other", base+"^{tree}")
	for _, tc := range []struct{ name, start string }{
		{"another start commit", other},
		{"a prefix of the start commit", base[:12]},
	} {
		if deleted, err := g.DeleteUnusedRunBranch(ctx, repo, branch, tc.start); err != nil || deleted {
			t.Errorf("%s: DeleteUnusedRunBranch = %v, %v; want kept, no error", tc.name, deleted, err)
		}
	}
	if tip, err := g.BranchTip(ctx, repo, branch); err != nil || tip != base {
		t.Fatalf("BranchTip = %q, %v; want %s", tip, err, base)
	}

	deleted, err := g.DeleteUnusedRunBranch(ctx, repo, branch, base)
	if err != nil || !deleted {
		t.Fatalf("DeleteUnusedRunBranch = %v, %v; want deleted", deleted, err)
	}
	if tip, err := g.BranchTip(ctx, repo, branch); err != nil || tip != "" {
		t.Errorf("BranchTip after delete = %q, %v; want no branch", tip, err)
	}
	for _, p := range []string{"refs/heads/kilroy", "logs/refs/heads/kilroy"} {
		if _, err := os.Stat(filepath.Join(repo, ".git", p)); !os.IsNotExist(err) {
			t.Errorf(".git/%s left behind (stat: %v)", p, err)
		}
	}
	if deleted, err := g.DeleteUnusedRunBranch(ctx, repo, branch, base); err != nil || deleted {
		t.Errorf("deleting it again = %v, %v; want nothing to do", deleted, err)
	}
}

func TestDeleteUnusedRunBranchKeepsCheckpoints(t *testing.T) {
	ctx := context.Background()
	g := newTestGit(t)
	repo := newRepo(t, g, map[string]string{"a.txt": "a\n"})
	wt, branch, base := newRun(t, g, repo)
	writeFile(t, wt, "b.txt", "b\n")
	res, err := g.Checkpoint(ctx, wt, spec(branch, "one"))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.RemoveWorktree(ctx, repo, wt); err != nil {
		t.Fatal(err)
	}
	if deleted, err := g.DeleteUnusedRunBranch(ctx, repo, branch, base); err != nil || deleted {
		t.Errorf("DeleteUnusedRunBranch of a branch with a checkpoint = %v, %v; want kept", deleted, err)
	}
	if tip, err := g.BranchTip(ctx, repo, branch); err != nil || tip != res.SHA {
		t.Errorf("BranchTip = %q, %v; want the checkpoint %s", tip, err, res.SHA)
	}
}
