package runner

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/internal/gittest"
	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
)

// TestNodeBreaksWorktree: a node that deletes the worktree's .git (a file
// pointing into the user's repository) or moves its HEAD fails the run at
// that node with a reason that says so. The run branch keeps the earlier
// checkpoints, no later node runs, and the user's repository is intact.
func TestNodeBreaksWorktree(t *testing.T) {
	for _, tc := range []struct {
		name    string
		command string
		want    error
	}{
		{"deletes .git", "rm -rf .git", gitops.ErrWorktreeBroken},
		{"detaches HEAD", "git checkout --quiet --detach", gitops.ErrHeadMoved},
		{"points HEAD at the user's branch", "git symbolic-ref HEAD refs/heads/main", gitops.ErrHeadMoved},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := gittest.NewRepo(t, map[string]string{"a.txt": "a\n", ".kilroy/ci.dot": pipeline(`
  one [shape=parallelogram, tool_command="echo one > one.txt"]
  breaker [shape=parallelogram, tool_command=` + quote(tc.command+" && echo b > b.txt") + `]
  after [shape=parallelogram, tool_command="echo after > after.txt"]
  start -> one -> breaker -> after -> exit`)})
			before := snapshot(t, repo)
			p, res := runLocal(t, localOptions(t, repo))

			if res.Status != attractor.StatusFail || res.FailedNode != "breaker" {
				t.Fatalf("run = %s at %q (%s), want fail at breaker", res.Status, res.FailedNode, res.FailureReason)
			}
			for _, w := range []string{"checkpoint after node breaker failed", tc.want.Error()} {
				if !strings.Contains(res.FailureReason, w) {
					t.Errorf("failure reason %q does not say %q", res.FailureReason, w)
				}
			}
			if diff := cmp.Diff(res.Completed, []string{"start", "one", "breaker"}); diff != "" {
				t.Errorf("completed nodes (-got +want):\n%s", diff)
			}
			want := []commitMsg{checkpointMsg(p.RunID, "start", "success"), checkpointMsg(p.RunID, "one", "success")}
			if diff := cmp.Diff(branchCommits(t, repo, before.Head, p.Branch), want); diff != "" {
				t.Errorf("run branch commits (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(treeFiles(t, repo, p.Branch), []string{".kilroy/ci.dot", "a.txt", "one.txt"}); diff != "" {
				t.Errorf("run branch files (-got +want):\n%s", diff)
			}
			cp, err := ReadCheckpoint(string(p.Dir))
			if err != nil {
				t.Fatal(err)
			}
			if tip := gittest.Git(t, repo, "rev-parse", p.Branch); cp.CommitSHA != tip {
				t.Errorf("checkpoint.json commit = %s, want the last good checkpoint %s", cp.CommitSHA, tip)
			}
			if diff := cmp.Diff(snapshot(t, repo), before); diff != "" {
				t.Errorf("user's repository changed (-got +want):\n%s", diff)
			}
			if out, err := gittest.GitErr(t, repo, "fsck", "--no-progress"); err != nil {
				t.Errorf("git fsck of the user's repository: %v\n%s", err, out)
			}
			if _, err := os.Stat(p.Dir.Worktree()); !os.IsNotExist(err) {
				t.Errorf("broken worktree left behind (stat: %v)", err)
			}
		})
	}
}
