package gitops

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestWarmWorktreeFollowsTheNextCommit parks a clean worktree and reuses
// it for a commit that changes the tree in each way a push can: the
// reused worktree must equal a fresh checkout of that commit, however
// few or many paths git writes.
func TestWarmWorktreeFollowsTheNextCommit(t *testing.T) {
	many := map[string]string{}
	for i := range maxRestorePaths + 20 {
		many[fmt.Sprintf("gen/%02d/f%d.txt", i%7, i)] = fmt.Sprintf("%d\n", i)
	}
	tests := []struct {
		name   string
		change func(t *testing.T, repo string)
	}{
		{"nothing", func(t *testing.T, repo string) {}},
		{"a file becomes a directory", func(t *testing.T, repo string) {
			must(t, os.Remove(filepath.Join(repo, "a.txt")))
			writeFile(t, repo, "a.txt/inner", "inner\n")
		}},
		{"a directory becomes a file", func(t *testing.T, repo string) {
			must(t, os.RemoveAll(filepath.Join(repo, "src")))
			writeFile(t, repo, "src", "now a file\n")
		}},
		{"a file becomes a symlink and a symlink a file", func(t *testing.T, repo string) {
			must(t, os.Remove(filepath.Join(repo, "docs/readme")))
			must(t, os.Symlink("../a.txt", filepath.Join(repo, "docs/readme")))
			must(t, os.Remove(filepath.Join(repo, "link")))
			writeFile(t, repo, "link", "was a link\n")
		}},
		{"the executable bit flips", func(t *testing.T, repo string) {
			must(t, os.Chmod(filepath.Join(repo, "run.sh"), 0o644))
			must(t, os.Chmod(filepath.Join(repo, "a.txt"), 0o755))
		}},
		{"the last file of a deep directory goes", func(t *testing.T, repo string) {
			must(t, os.RemoveAll(filepath.Join(repo, "keep")))
		}},
		{"more paths than restore takes", func(t *testing.T, repo string) {
			for p, c := range many {
				writeFile(t, repo, p, c)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s := newScene(t)
			must(t, os.Symlink("src/b.txt", filepath.Join(s.repo, "link")))
			mustGit(t, s.g, s.repo, "add", "--all")
			mustGit(t, s.g, s.repo, "commit", "--quiet", "-m", "link")
			base := mustGit(t, s.g, s.repo, "rev-parse", "HEAD")
			tc.change(t, s.repo)
			mustGit(t, s.g, s.repo, "add", "--all")
			mustGit(t, s.g, s.repo, "commit", "--quiet", "--allow-empty", "-m", "next")
			next := mustGit(t, s.g, s.repo, "rev-parse", "HEAD")

			parked := filepath.Join(t.TempDir(), "parked")
			must(t, s.g.ParkWorktree(ctx, s.repo, s.wt, parked, base))
			wt2, branch := filepath.Join(t.TempDir(), "wt2"), RunBranch("ci", "r2")
			must(t, s.g.ReuseWorktree(ctx, s.repo, parked, wt2, branch, next))
			assertFreshCheckout(t, s.g, s.repo, wt2, branch, next)
		})
	}
}

// TestParkedIndexIsNotRacy: a worktree parked right after its checkout
// keeps no more than settleRacy files git would call racily clean (and
// hash again whenever it writes the index, on the take's path).
func TestParkedIndexIsNotRacy(t *testing.T) {
	files := map[string]string{}
	for i := range 3 * settleRacy {
		files[fmt.Sprintf("d%d/f%d.txt", i%5, i)] = fmt.Sprintf("%d\n", i)
	}
	g := newTestGit(t)
	repo := newRepo(t, g, files)
	wt, _, base := newRun(t, g, repo)
	admin := mustGit(t, g, wt, "rev-parse", "--absolute-git-dir")
	parked := filepath.Join(t.TempDir(), "parked")
	must(t, g.ParkWorktree(context.Background(), repo, wt, parked, base))

	idx, err := readIndex(filepath.Join(admin, "index"))
	must(t, err)
	idx.file.Close()
	racy := 0
	for _, e := range idx.entries {
		if int64(e.mtimeSec) >= idx.mtime.Unix() {
			racy++
		}
	}
	if racy > settleRacy {
		t.Errorf("%d of %d entries racily clean in the parked index, want at most %d", racy, len(idx.entries), settleRacy)
	}
}
