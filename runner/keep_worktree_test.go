package runner

import (
	"context"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/internal/gittest"
)

// TestKeepWorktree: Execute removes the run's worktree when the run ends,
// unless KeepWorktree leaves it to the caller (the server parks it).
func TestKeepWorktree(t *testing.T) {
	for _, keep := range []bool{false, true} {
		repo := gittest.NewRepo(t, map[string]string{".kilroy/ci.dot": pipeline(`  t [shape=parallelogram, tool_command="echo hi > out.txt"]
  start -> t -> exit`)})
		o := localOptions(t, repo)
		o.KeepWorktree = keep
		p, res := runLocal(t, o)
		_, err := os.Stat(p.Dir.Worktree())
		got := []any{res.Status, err == nil}
		if diff := cmp.Diff(got, []any{res.Status, keep}); diff != "" || res.Status != "success" {
			t.Errorf("KeepWorktree=%v: status %s, worktree there (-got +want):\n%s", keep, res.Status, diff)
		}
		if keep {
			if got := readFile(t, p.Dir.Worktree()+"/out.txt"); got != "hi\n" {
				t.Errorf("kept worktree's out.txt = %q", got)
			}
			_ = p.git.RemoveWorktree(context.Background(), p.RepoDir, p.Dir.Worktree())
		}
	}
}
