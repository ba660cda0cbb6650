package gitops

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWorktreeAfterKilledAdd: the state a kill -9 during `git worktree add`
// (or a checkout in the worktree) leaves: the registration still locked
// "initializing", the worktree half made or gone, the worktree's
// index.lock, the run branch's ref lock. Recreating the run's worktree,
// as starting over or resuming does, succeeds; another run's locked
// worktree stays locked.
func TestWorktreeAfterKilledAdd(t *testing.T) {
	for _, tc := range []struct {
		name   string
		break_ func(t *testing.T, g *Git, repo, wt, branch string)
		remove bool // resume: RemoveWorktree first
	}{
		{name: "locked, directory gone (starting over)", break_: func(t *testing.T, g *Git, repo, wt, branch string) {
			if err := os.RemoveAll(filepath.Dir(wt)); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "locked, half made, index.lock (resume)", remove: true, break_: func(t *testing.T, g *Git, repo, wt, branch string) {
			writeFile(t, filepath.Join(repo, ".git", "worktrees", filepath.Base(wt)), "index.lock", "")
			if err := os.Remove(filepath.Join(wt, "a.txt")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "branch ref lock (resume)", remove: true, break_: func(t *testing.T, g *Git, repo, wt, branch string) {
			writeFile(t, filepath.Join(repo, ".git", "refs", "heads"), filepath.FromSlash(branch)+".lock", "")
			if err := os.RemoveAll(wt); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			g := newTestGit(t)
			repo := newRepo(t, g, map[string]string{"a.txt": "a\n"})
			base := mustGit(t, g, repo, "rev-parse", "HEAD")
			wt := filepath.Join(t.TempDir(), "run", "worktree")
			branch := RunBranch("ci", "01KILLED")
			mustGit(t, g, repo, "worktree", "add", "--quiet", "--lock", "--reason", "initializing", "-B", branch, wt, base)
			other := filepath.Join(t.TempDir(), "other")
			mustGit(t, g, repo, "worktree", "add", "--quiet", "--lock", "-B", RunBranch("ci", "01OTHER"), other, base)
			tc.break_(t, g, repo, wt, branch)

			if tc.remove {
				if err := g.RemoveWorktree(ctx, repo, wt); err != nil {
					t.Fatalf("RemoveWorktree: %v", err)
				}
			}
			if err := g.AddWorktree(ctx, repo, wt, branch, base); err != nil {
				t.Fatalf("AddWorktree after the kill: %v", err)
			}
			if got := readFile(t, filepath.Join(wt, "a.txt")); got != "a\n" {
				t.Errorf("a.txt = %q in the recreated worktree", got)
			}
			list := mustGit(t, g, repo, "worktree", "list", "--porcelain")
			if !strings.Contains(list, "worktree "+other+"\nHEAD "+base+"\nbranch refs/heads/kilroy/run/ci/01OTHER\nlocked") {
				t.Errorf("the other run's worktree is no longer registered and locked:\n%s", list)
			}
		})
	}
}
