package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/internal/gittest"
)

// TestResumeHostileRunFiles: a node can reach its run directory, so it can
// leave a link to /dev/zero or a FIFO where checkpoint.json or graph.dot
// was. Resume then refuses the run with an error instead of hanging or
// filling memory.
func TestResumeHostileRunFiles(t *testing.T) {
	for _, tc := range []struct {
		name string
		file func(RunDir) string
		make func(path string) error
	}{
		{"checkpoint link to /dev/zero", RunDir.Checkpoint, func(p string) error { return os.Symlink("/dev/zero", p) }},
		{"checkpoint fifo", RunDir.Checkpoint, func(p string) error { return syscall.Mkfifo(p, 0o644) }},
		{"graph link to /dev/zero", RunDir.Graph, func(p string) error { return os.Symlink("/dev/zero", p) }},
		{"graph fifo", RunDir.Graph, func(p string) error { return syscall.Mkfifo(p, 0o644) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := gittest.NewRepo(t, map[string]string{".kilroy/ci.dot": pipeline(`
  one [shape=parallelogram, tool_command="true"]
  start -> one -> exit`)})
			o := localOptions(t, repo)
			first := interruptedRun(t, o)
			path := tc.file(first.Dir)
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := tc.make(path); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := PrepareResume(context.Background(), string(first.Dir), o)
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, ErrUsage) {
					t.Errorf("PrepareResume = %v, want a usage error", err)
				}
			case <-time.After(time.Minute):
				t.Fatal("PrepareResume hung")
			}
		})
	}
}

// TestResumeAfterKillDuringWorktreeAdd: the bot was killed while `git
// worktree add` recreated the run's worktree: git's registration of it is
// left locked ("initializing"), the directory never got its files, and
// the run branch's ref lock is still there. The next resume clears that
// state for its own run and the run finishes.
func TestResumeAfterKillDuringWorktreeAdd(t *testing.T) {
	repo := gittest.NewRepo(t, map[string]string{".kilroy/ci.dot": pipeline(`
  one [shape=parallelogram, tool_command="true"]
  two [shape=parallelogram, tool_command="true"]
  start -> one -> two -> exit`)})
	o := localOptions(t, repo)
	first := interruptedRun(t, o)
	wt := first.Dir.Worktree()
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Fatalf("the interrupted run left its worktree (stat: %v)", err)
	}
	gittest.Git(t, repo, "worktree", "add", "--lock", "--reason", "initializing", "--detach", wt, first.BaseSHA)
	if err := os.RemoveAll(wt); err != nil { // killed before the checkout
		t.Fatal(err)
	}
	lock := filepath.Join(repo, ".git", "refs", "heads", filepath.FromSlash(first.Branch)+".lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, res := resume(t, first.Dir, o)
	if res.Status != attractor.StatusSuccess {
		t.Errorf("resumed run: %s (%s), want success", res.Status, res.FailureReason)
	}
}
