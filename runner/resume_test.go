package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/internal/gittest"
	"github.com/kilroy-bot/kilroy-bot/policy"
)

// cancelAfter cancels the run once node has been checkpointed: the
// interruption happens between two nodes, as a signal would.
type cancelAfter struct {
	attractor.NopListener
	node   string
	cancel context.CancelFunc
}

func (c cancelAfter) Checkpointed(_ context.Context, ev attractor.Checkpointed) error {
	if ev.Node == c.node {
		c.cancel()
	}
	return nil
}

// interruptedRun runs repo's pipeline until node one has its checkpoint
// and returns the run directory and the run.
func interruptedRun(t *testing.T, o LocalOptions) *Prepared {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o.Listener = cancelAfter{node: "one", cancel: cancel}
	p, res, err := RunLocal(ctx, o)
	if err != nil {
		t.Fatalf("RunLocal: %v", err)
	}
	if res.Status != attractor.StatusFail || res.FailureClass != attractor.ClassCanceled {
		t.Fatalf("interrupted run = %s, %s (%s); want fail, canceled", res.Status, res.FailureClass, res.FailureReason)
	}
	return p
}

func resume(t *testing.T, dir RunDir, o LocalOptions) (*Prepared, *attractor.RunResult) {
	t.Helper()
	ctx := context.Background()
	p, err := PrepareResume(ctx, string(dir), o)
	if err != nil {
		t.Fatalf("PrepareResume: %v", err)
	}
	res, err := p.Execute(ctx, o)
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	return p, res
}

// TestResumeSkipsCompletedNodes interrupts a run after its first node's
// checkpoint and resumes it: the node does not run again, the next one
// finds its work in the worktree, and the branch continues from the
// checkpoint.
func TestResumeSkipsCompletedNodes(t *testing.T) {
	counter := filepath.Join(t.TempDir(), "one.count") // outside the worktree
	repo := gittest.NewRepo(t, map[string]string{".kilroy/ci.dot": pipeline(`
  one [shape=parallelogram, tool_command=` + quote("echo ran >> "+counter+" && echo one > one.txt") + `]
  two [shape=parallelogram, tool_command="test -f one.txt && echo two > two.txt"]
  start -> one -> two -> exit`)})
	before := snapshot(t, repo)
	o := localOptions(t, repo)
	first := interruptedRun(t, o)
	cp, err := ReadCheckpoint(string(first.Dir))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cp.State.Completed, []string{"start", "one"}); diff != "" {
		t.Fatalf("interrupted run's completed nodes (-got +want):\n%s", diff)
	}
	checkpointSHA := gittest.Git(t, repo, "rev-parse", first.Branch)
	if cp.CommitSHA != checkpointSHA {
		t.Errorf("checkpoint.json commit = %s, branch tip %s", cp.CommitSHA, checkpointSHA)
	}

	// An answer the pipeline cannot use is refused before the worktree is
	// made again.
	bad := o
	bad.Answers = map[string]string{"two": "yes"}
	if _, err := PrepareResume(context.Background(), string(first.Dir), bad); !errors.Is(err, ErrUsage) ||
		!strings.Contains(err.Error(), `--answer two=yes: node "two" is not a human gate`) {
		t.Errorf("resume with --answer two=yes: err = %v, want a usage error", err)
	}
	if _, err := os.Stat(first.Dir.Worktree()); !os.IsNotExist(err) {
		t.Errorf("refused resume left a worktree (stat: %v)", err)
	}

	p, res := resume(t, first.Dir, o)
	if res.Status != attractor.StatusSuccess {
		t.Fatalf("resumed run = %s (%s), want success", res.Status, res.FailureReason)
	}
	if p.RunID != first.RunID || p.Branch != first.Branch {
		t.Errorf("resumed run %s on %s, want %s on %s", p.RunID, p.Branch, first.RunID, first.Branch)
	}
	if got := readFile(t, counter); got != "ran\n" {
		t.Errorf("node one ran %d times, want once", strings.Count(got, "ran"))
	}
	want := []commitMsg{
		checkpointMsg(p.RunID, "start", "success"),
		checkpointMsg(p.RunID, "one", "success"),
		checkpointMsg(p.RunID, "two", "success"),
		checkpointMsg(p.RunID, "exit", "success"),
	}
	if diff := cmp.Diff(branchCommits(t, repo, before.Head, p.Branch), want); diff != "" {
		t.Errorf("checkpoint commits (-got +want):\n%s", diff)
	}
	if got := gittest.Git(t, repo, "merge-base", "--is-ancestor", checkpointSHA, p.Branch); got != "" {
		t.Errorf("merge-base printed %q", got)
	}
	if diff := cmp.Diff(treeFiles(t, repo, p.Branch), []string{".kilroy/ci.dot", "one.txt", "two.txt"}); diff != "" {
		t.Errorf("run branch files (-got +want):\n%s", diff)
	}
	cp, err = ReadCheckpoint(string(p.Dir))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cp.State.Completed, []string{"start", "one", "two", "exit"}); diff != "" {
		t.Errorf("final completed nodes (-got +want):\n%s", diff)
	}
	if _, err := PrepareResume(context.Background(), string(p.Dir), o); !errors.Is(err, ErrUsage) {
		t.Errorf("resuming a finished run: err = %v, want ErrUsage", err)
	}
	if diff := cmp.Diff(snapshot(t, repo), before); diff != "" {
		t.Errorf("user's repository changed (-got +want):\n%s", diff)
	}
}

// TestResumeUsesPolicySnapshot changes the repository's checkpoint excludes
// between the start and the resume: the resumed run keeps excluding what
// the snapshot in checkpoint.json says.
func TestResumeUsesPolicySnapshot(t *testing.T) {
	config := func(glob string) string {
		return "version: 1\nartifact_policy:\n  checkpoint:\n    exclude_globs: [\"" + glob + "\"]\n"
	}
	repo := gittest.NewRepo(t, map[string]string{
		".kilroy/config.yml": config("**/gen/**"),
		".kilroy/ci.dot": pipeline(`
  one [shape=parallelogram, tool_command="true"]
  two [shape=parallelogram, tool_command="mkdir -p gen other && echo g > gen/x.txt && echo o > other/y.txt"]
  start -> one -> two -> exit`),
	})
	o := localOptions(t, repo)
	first := interruptedRun(t, o)
	gittest.CommitFiles(t, repo, "exclude other instead", map[string]string{".kilroy/config.yml": config("**/other/**")})

	p, res := resume(t, first.Dir, o)
	if res.Status != attractor.StatusSuccess {
		t.Fatalf("resumed run = %s (%s), want success", res.Status, res.FailureReason)
	}
	want := []string{".kilroy/ci.dot", ".kilroy/config.yml", "other/y.txt"}
	if diff := cmp.Diff(treeFiles(t, repo, p.Branch), want); diff != "" {
		t.Errorf("run branch files (-got +want):\n%s", diff)
	}
}

// TestResumeRefusesTamperedPolicy edits one glob of the snapshot in
// checkpoint.json: resume refuses it instead of running with a policy the
// run did not start with.
func TestResumeRefusesTamperedPolicy(t *testing.T) {
	repo := gittest.NewRepo(t, map[string]string{".kilroy/ci.dot": pipeline(`
  one [shape=parallelogram, tool_command="true"]
  start -> one -> exit`)})
	o := localOptions(t, repo)
	first := interruptedRun(t, o)
	path := first.Dir.Checkpoint()
	data := readFile(t, path)
	tampered := strings.Replace(data, `"**/node_modules/**"`, `"**/node_modulez/**"`, 1)
	if tampered == data {
		t.Fatalf("checkpoint.json has no node_modules exclude to tamper with:\n%s", data)
	}
	gittest.WriteFile(t, path, tampered)
	before := snapshot(t, repo)
	tip := gittest.Git(t, repo, "rev-parse", first.Branch)

	_, err := PrepareResume(context.Background(), string(first.Dir), o)
	if !errors.Is(err, policy.ErrSnapshotMismatch) || !errors.Is(err, ErrUsage) {
		t.Fatalf("PrepareResume = %v, want ErrSnapshotMismatch and ErrUsage", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error is not one line: %q", err)
	}
	if diff := cmp.Diff(snapshot(t, repo), before); diff != "" {
		t.Errorf("user's repository changed (-got +want):\n%s", diff)
	}
	if got := gittest.Git(t, repo, "rev-parse", first.Branch); got != tip {
		t.Errorf("run branch moved from %s to %s", tip, got)
	}
	if _, err := os.Stat(first.Dir.Worktree()); !os.IsNotExist(err) {
		t.Errorf("a refused resume made a worktree (stat: %v)", err)
	}
}

// TestResumeRelativeRunDir resumes with the run directory given relative
// to the working directory (`kilroy-bot resume run`): nodes run in the
// worktree, so their stage paths must still lead to the run directory.
func TestResumeRelativeRunDir(t *testing.T) {
	repo := gittest.NewRepo(t, map[string]string{".kilroy/ci.dot": pipeline(`
  one [shape=parallelogram, tool_command="true"]
  two [shape=parallelogram, tool_command="echo log > \"$KILROY_STAGE_LOGS_DIR/two.log\""]
  start -> one -> two -> exit`)})
	o := localOptions(t, repo)
	first := interruptedRun(t, o)
	t.Chdir(filepath.Dir(string(first.Dir)))

	p, res := resume(t, RunDir(filepath.Base(string(first.Dir))), o)
	if res.Status != attractor.StatusSuccess {
		t.Fatalf("resumed run = %s (%s), want success", res.Status, res.FailureReason)
	}
	if !filepath.IsAbs(string(p.Dir)) {
		t.Errorf("run directory %q is not absolute", p.Dir)
	}
	if got := readFile(t, filepath.Join(string(first.Dir), "nodes", "two", "two.log")); got != "log\n" {
		t.Errorf("two.log = %q", got)
	}
	if diff := cmp.Diff(treeFiles(t, repo, p.Branch), []string{".kilroy/ci.dot"}); diff != "" {
		t.Errorf("run branch files (-got +want):\n%s", diff)
	}
}
