package gitops

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestChangedSince(t *testing.T) {
	ctx := context.Background()
	g := newTestGit(t)
	repo := newRepo(t, g, map[string]string{
		".gitignore": "*.log\n",
		"README":     "r\n",
		"r1.txt":     "rename me on the branch\n",
		"d.txt":      "delete me on the branch\n",
		"s1.txt":     "rename me, uncommitted\n",
		"edit.txt":   "edit me, uncommitted\n",
		"del2.txt":   "delete me, uncommitted\n",
	})
	wt, branch, base := newRun(t, g, repo)

	// Committed by checkpoints.
	writeFile(t, wt, "web/dist/app.js", "built\n")
	writeFile(t, wt, "README", "changed\n")
	if err := os.Rename(filepath.Join(wt, "r1.txt"), filepath.Join(wt, "r2.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(wt, "d.txt")); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Checkpoint(ctx, wt, CheckpointSpec{RunID: "r1", NodeID: "a", Status: "success", Branch: branch}); err != nil {
		t.Fatal(err)
	}
	// Left in the worktree.
	writeFile(t, wt, "u dir/untracked.txt", "u\n")
	writeFile(t, wt, "edit.txt", "edited\n")
	writeFile(t, wt, "x.log", "ignored\n")
	writeFile(t, wt, "node_modules/m.js", "not ignored, so a candidate\n")
	if err := os.Remove(filepath.Join(wt, "del2.txt")); err != nil {
		t.Fatal(err)
	}
	mustGit(t, g, wt, "mv", "s1.txt", "s2.txt")

	committed, uncommitted, err := g.ChangedSince(ctx, wt, base)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(committed, []string{"README", "r2.txt", "web/dist/app.js"}); diff != "" {
		t.Errorf("committed (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(uncommitted, []string{"edit.txt", "node_modules/m.js", "s2.txt", "u dir/untracked.txt"}); diff != "" {
		t.Errorf("uncommitted (-got +want):\n%s", diff)
	}

	if _, _, err := g.ChangedSince(ctx, wt, "not-a-commit"); err == nil {
		t.Error("ChangedSince(unknown base): no error")
	}
}
