package server

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/internal/gittest"
	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
	"github.com/kilroy-bot/kilroy-bot/runner/wtpool"
)

// inspectScript prints what a run finds in its worktree when it starts:
// git's status with ignored files, and every path below the top with its
// type and content hash (git's .git file left out).
const inspectScript = `git status --porcelain --ignored --untracked-files=all; ` +
	`find . -path ./.git -prune -o -print | LC_ALL=C sort | while read -r p; do ` +
	`if [ -L "$p" ]; then echo "$p -> $(readlink "$p")"; elif [ -f "$p" ]; then echo "$p $(git hash-object "$p") $(stat -c %a "$p")"; else echo "$p/ $(stat -c %a "$p")"; fi; done`

// warmPipeline inspects the worktree, records the worktree directory's
// inode (kept by a rename: the same inode means the same worktree) and
// then leaves every kind of residue a node can.
func warmPipeline(out string) string {
	dirty := strings.Join([]string{
		"echo junk > junk.txt", "mkdir -p build && echo obj > build/out.o", "echo changed > main.go",
		"mkdir -p src/.git && echo '[core]' > src/.git/config", "git init -q vendor/lib",
		"ln -s " + out + " out", "chmod 700 src", "rm src/keep.txt",
	}, " && ")
	return "digraph ci {\n  start [shape=Mdiamond]\n  exit [shape=Msquare]\n" +
		"  inspect [shape=parallelogram, tool_command=" + quoteDOT(inspectScript+` > `+out+`/inspect-$KILROY_RUN_ID.txt`) + "]\n" +
		"  inode [shape=parallelogram, tool_command=" + quoteDOT(`stat -c %i . > `+out+`/inode-$KILROY_RUN_ID.txt`) + "]\n" +
		"  dirty [shape=parallelogram, tool_command=" + quoteDOT(dirty) + "]\n" +
		"  start -> inspect -> inode -> dirty -> exit\n}\n"
}

func quoteDOT(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// TestServerWarmWorktree: the second run of a pull request, after a push,
// takes the worktree the first run left residue in from the pool, and
// finds it exactly as a fresh checkout of the new head.
func TestServerWarmWorktree(t *testing.T) {
	out := t.TempDir()
	var pool *wtpool.Pool
	e := newServerEnvWith(t, func(o *ServerOptions) {
		g, err := gitops.New(gitops.Options{GitPath: gittest.Path(t), PATH: os.Getenv("PATH"), HomeDir: filepath.Join(o.DataDir, "home")})
		if err != nil {
			t.Fatal(err)
		}
		if pool, err = wtpool.New(wtpool.Options{Dir: filepath.Join(o.DataDir, "pool"), Git: g}); err != nil {
			t.Fatal(err)
		}
		o.Pool = pool
	})
	e.seed(map[string]string{".kilroy/ci.dot": warmPipeline(out), ".gitignore": "build/\n", "src/keep.txt": "keep\n"})
	e.gh.SetPermission("octo", "widgets", "alice", "write")
	pr := e.openPR(3, "alice", map[string]string{"README.md": "one\n"})
	e.handle(e.prEvent("opened", pr))
	run1 := e.newRun("ci", 0)
	if calls := e.reps.waitEnd(t, run1.RunID); calls[len(calls)-1] != "close" {
		t.Fatalf("first run: %q", calls)
	}
	e.waitRevoked()

	pr.HeadSHA = e.repo.Commit(t, "feature-3", map[string]string{"README.md": "two\n", "src/new.txt": "new\n"}, "push")
	e.gh.PutPull("octo", "widgets", pr)
	e.handle(e.prEvent("synchronize", pr))
	run2 := e.newRun("ci", 1)
	if calls := e.reps.waitEnd(t, run2.RunID); calls[len(calls)-1] != "close" {
		t.Fatalf("second run: %q", calls)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if a, b := read("inode-"+run1.RunID+".txt"), read("inode-"+run2.RunID+".txt"); a != b {
		t.Errorf("second run's worktree is not the first's (inodes %s, %s): not taken from the pool", a, b)
	}
	if diff := cmp.Diff(read("inspect-"+run2.RunID+".txt"), freshInspect(t, e, pr.HeadSHA)); diff != "" {
		t.Errorf("second run's worktree vs a fresh checkout of %s (-got +want):\n%s", pr.HeadSHA, diff)
	}
}

// freshInspect runs inspectScript in a fresh clone of the repository at
// sha.
func freshInspect(t *testing.T, e *serverEnv, sha string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "fresh")
	gittest.Git(t, filepath.Dir(dir), "clone", "--quiet", "--no-checkout", e.repo.Dir, dir)
	gittest.Git(t, dir, "checkout", "--quiet", "--detach", sha)
	cmd := exec.CommandContext(context.Background(), "sh", "-c", inspectScript)
	cmd.Dir = dir
	cmd.Env = gittest.Env(dir)
	b, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
