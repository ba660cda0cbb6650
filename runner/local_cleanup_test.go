package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/internal/gittest"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

// A run that fails after its worktree was made but before its first
// checkpoint leaves the user's repository exactly as it was: no run branch,
// no worktree, same index, files and .git; a run that fails after a
// checkpoint keeps its branch, which holds that work.

// gitDirState hashes every file and lists every directory under repo's
// .git, so a test sees any ref, reflog, worktree registration or empty
// directory a run left behind.
func gitDirState(t *testing.T, repo string) map[string]string {
	t.Helper()
	root := filepath.Join(repo, ".git")
	state := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			state[rel+"/"] = "dir"
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		state[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return state
}

// userRepo is a repository with a one-node pipeline and some uncommitted
// work of the user's.
func userRepo(t *testing.T, dot string) string {
	t.Helper()
	repo := gittest.NewRepo(t, map[string]string{"README.md": "hello\n", ".kilroy/ci.dot": dot})
	gittest.WriteFile(t, filepath.Join(repo, "README.md"), "hello, edited\n")
	gittest.WriteFile(t, filepath.Join(repo, "notes.txt"), "untracked\n")
	return repo
}

// checkUntouched fails unless repo is as before: the snapshot, the .git
// directory, no kilroy branch and only the main worktree.
func checkUntouched(t *testing.T, repo string, before repoState, beforeGit map[string]string) {
	t.Helper()
	if got := gittest.Git(t, repo, "for-each-ref", "refs/heads/kilroy"); got != "" {
		t.Errorf("git for-each-ref refs/heads/kilroy = %q, want nothing", got)
	}
	if got, want := gittest.Git(t, repo, "worktree", "list", "--porcelain"), before.Worktrees; got != want {
		t.Errorf("git worktree list = %q, want only the main worktree %q", got, want)
	}
	if diff := cmp.Diff(snapshot(t, repo), before); diff != "" {
		t.Errorf("user's repository changed (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(gitDirState(t, repo), beforeGit); diff != "" {
		t.Errorf(".git changed (-got +want):\n%s", diff)
	}
}

var onePipeline = pipeline(`
  one [shape=parallelogram, tool_command="echo done > out.txt"]
  start -> one -> exit`)

// TestPolicyResolveFailureRemovesRunBranch: the artifact policy fails to
// resolve once the worktree exists. The config parser rejects every policy
// Resolve would, so the test hands assemble one that skipped the parser.
func TestPolicyResolveFailureRemovesRunBranch(t *testing.T) {
	ctx := context.Background()
	repo := userRepo(t, onePipeline)
	before, beforeGit := snapshot(t, repo), gitDirState(t, repo)

	o := localOptions(t, repo)
	dir := RunDir(o.RunDir)
	g, err := newGit(o.GitPath, o.Env, dir)
	if err != nil {
		t.Fatal(err)
	}
	sel, err := SelectPipeline(ctx, g, repo, before.Head, "")
	if err != nil {
		t.Fatal(err)
	}
	sel.Config.ArtifactPolicy.Verify.DenyGlobs = []string{"web/[dist/**"}
	_, err = Assemble(ctx, g, "01TESTRUN", dir, repo, before.Head, sel, o.Env)
	if err == nil || !errors.Is(err, ErrUsage) {
		t.Fatalf("assemble = %v, want a usage error from the artifact policy", err)
	}
	checkUntouched(t, repo, before, beforeGit)
	if _, err := os.Stat(dir.Worktree()); !os.IsNotExist(err) {
		t.Errorf("worktree directory still there (stat: %v)", err)
	}
}

// TestFailureBeforeFirstCheckpointRemovesRunBranch: Execute fails after
// PrepareLocal made the worktree and branch, before any node was
// committed.
func TestFailureBeforeFirstCheckpointRemovesRunBranch(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, o *LocalOptions, p *Prepared) context.Context
	}{
		{
			name: "agent factory fails",
			setup: func(_ *testing.T, o *LocalOptions, _ *Prepared) context.Context {
				o.NewAgent = func(map[string]string, string, string, *sandbox.Sandbox) (attractor.Agent, error) {
					return nil, errors.New("no API key for the agent")
				}
				return context.Background()
			},
		},
		{
			name: "progress log cannot be opened",
			setup: func(t *testing.T, _ *LocalOptions, p *Prepared) context.Context {
				if err := os.Mkdir(p.Dir.Progress(), 0o755); err != nil {
					t.Fatal(err)
				}
				return context.Background()
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := userRepo(t, onePipeline)
			before, beforeGit := snapshot(t, repo), gitDirState(t, repo)
			o := localOptions(t, repo)
			p, err := PrepareLocal(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if got := runBranches(t, repo); len(got) != 1 {
				t.Fatalf("after PrepareLocal: run branches %v, want the run's", got)
			}
			ctx := tc.setup(t, &o, p)
			if _, err := p.Execute(ctx, o); err == nil {
				t.Fatal("Execute succeeded, want the injected failure")
			}
			checkUntouched(t, repo, before, beforeGit)
		})
	}
}

// TestFailureAfterCheckpointKeepsRunBranch: once a checkpoint is on the
// run branch, no failure deletes it.
func TestFailureAfterCheckpointKeepsRunBranch(t *testing.T) {
	for _, tc := range []struct {
		name      string
		dot       string
		cancelOn  string      // node whose checkpoint cancels the run
		wantNodes [][2]string // checkpointed node and status, in order
	}{
		{
			name: "node fails",
			dot: pipeline(`
  one [shape=parallelogram, tool_command="exit 3"]
  start -> one -> exit`),
			wantNodes: [][2]string{{"start", "success"}, {"one", "fail"}},
		},
		{
			name: "cancelled after the start node",
			dot: pipeline(`
  one [shape=parallelogram, tool_command="while true; do sleep 0.05; done"]
  start -> one -> exit`),
			cancelOn:  "start",
			wantNodes: [][2]string{{"start", "success"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := userRepo(t, tc.dot)
			before := snapshot(t, repo)
			o := localOptions(t, repo)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancelOn != "" {
				o.Listener = cancelAfter{node: tc.cancelOn, cancel: cancel}
			}
			p, res, err := RunLocal(ctx, o)
			if err == nil && res.Status == attractor.StatusSuccess {
				t.Fatal("run succeeded, want it to fail")
			}
			if diff := cmp.Diff(runBranches(t, repo), []string{p.Branch}); diff != "" {
				t.Errorf("run branches (-got +want):\n%s", diff)
			}
			want := make([]commitMsg, len(tc.wantNodes))
			for i, n := range tc.wantNodes {
				want[i] = checkpointMsg(p.RunID, n[0], n[1])
			}
			if diff := cmp.Diff(branchCommits(t, repo, before.Head, p.Branch), want); diff != "" {
				t.Errorf("run branch commits (-got +want):\n%s", diff)
			}
			if got := gittest.Git(t, repo, "worktree", "list", "--porcelain"); got != before.Worktrees {
				t.Errorf("git worktree list = %q, want only the main worktree", got)
			}
		})
	}
}
