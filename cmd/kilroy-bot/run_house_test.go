package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/runner"
)

// The manager loop (shape=house) end to end through `kilroy-bot run`: the
// child pipeline's nodes are checkpointed on the run branch as
// <house>/<child>, the child's context reaches the parent, a failing child
// makes the run red, and a run killed inside the child resumes there.

// houseRepoFiles is a repository whose pipeline runs .kilroy/child.dot in
// house node loop and routes on what the child wrote to the context.
func houseRepoFiles(child string) map[string]string {
	return map[string]string{
		".kilroy/ci.dot": dotFor(`
  loop [shape=house, stack.child_dotfile=".kilroy/child.dot", manager.max_cycles=20]
  approved [shape=parallelogram, tool_command="test -f built.txt && echo ok > approved.txt"]
  refused [shape=parallelogram, tool_command="echo the child did not approve; exit 1"]
  start -> loop
  loop -> approved [condition="context.review=approved"]
  loop -> refused
  approved -> exit
  refused -> exit`),
		".kilroy/child.dot": child,
	}
}

func childDOT(test string) string {
	mark := `printf '{"status":"success","context_updates":{"review":"approved"}}' > "$KILROY_STAGE_STATUS_PATH"`
	return `digraph child {
  start [shape=Mdiamond]
  build [shape=parallelogram, tool_command="echo built > built.txt"]
  mark  [shape=parallelogram, tool_command=` + dotQuote(mark) + `]
  test  [shape=octagon, command=` + dotQuote(test) + `]
  exit  [shape=Msquare]
  start -> build -> mark -> test -> exit
}
`
}

// runBranchNodes lists the Kilroy-Node trailers of the run branch's
// commits since head, oldest first.
func runBranchNodes(t *testing.T, repo, head string) []string {
	t.Helper()
	branch := gitT(t, repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/kilroy/")
	return strings.Fields(gitT(t, repo, "log", "--reverse", "--format=%(trailers:key=Kilroy-Node,valueonly)", head+".."+branch))
}

func TestRunManagerLoopSandboxed(t *testing.T) {
	needSandbox(t)
	t.Run("child passes", func(t *testing.T) {
		repo := newRepo(t, houseRepoFiles(childDOT("test -f built.txt")))
		head := gitT(t, repo, "rev-parse", "HEAD")
		runDir := filepath.Join(t.TempDir(), "run")
		code, stdout, stderr := runCmd("run", "--repo", repo, "--run-dir", runDir)
		if code != 0 {
			t.Fatalf("exit code %d, want 0\nstderr:\n%s\nstdout:\n%s", code, stderr, stdout)
		}
		want := []string{"start", "loop/start", "loop/build", "loop/mark", "loop/test", "loop/exit", "loop", "approved", "exit"}
		if diff := cmp.Diff(runBranchNodes(t, repo, head), want); diff != "" {
			t.Errorf("checkpoint commits (-got +want):\n%s", diff)
		}
		if diff := cmp.Diff(runBranchFiles(t, repo), []string{".kilroy/child.dot", ".kilroy/ci.dot", "approved.txt", "built.txt"}); diff != "" {
			t.Errorf("run branch files (-got +want):\n%s", diff)
		}
		if !strings.Contains(stdout, "`loop/test`") {
			t.Errorf("the report does not show the child's verify node:\n%s", stdout)
		}
		cp, err := runner.ReadCheckpoint(runDir)
		if err != nil {
			t.Fatal(err)
		}
		if got := cp.State.Context["stack.child.status"]; got != "completed" {
			t.Errorf("stack.child.status = %v, want completed", got)
		}
	})
	t.Run("child fails", func(t *testing.T) {
		repo := newRepo(t, houseRepoFiles(childDOT("echo child tests broken; exit 1")))
		head := gitT(t, repo, "rev-parse", "HEAD")
		runDir := filepath.Join(t.TempDir(), "run")
		code, stdout, stderr := runCmd("run", "--repo", repo, "--run-dir", runDir)
		if code != 1 {
			t.Fatalf("exit code %d, want 1: a failed child is a red run\nstderr:\n%s\nstdout:\n%s", code, stderr, stdout)
		}
		if !strings.Contains(stdout, "child tests broken") {
			t.Errorf("the report does not say why the child failed:\n%s", stdout)
		}
		want := []string{"start", "loop/start", "loop/build", "loop/mark", "loop/test", "loop"}
		if diff := cmp.Diff(runBranchNodes(t, repo, head), want); diff != "" {
			t.Errorf("checkpoint commits (-got +want):\n%s", diff)
		}
	})
}

// TestResumeInsideManagerLoop: a run killed with SIGKILL inside the child
// resumes inside the child: the child's nodes checkpointed before the kill
// do not run again, and the run goes on from the node that was killed.
func TestResumeInsideManagerLoop(t *testing.T) {
	outside := t.TempDir() // not in the worktree: survives the kill and the resume
	counter := filepath.Join(outside, "one.count")
	marker := filepath.Join(outside, "killed")
	killOnce := "if [ ! -e " + marker + " ]; then touch " + marker + "; kill -9 $PPID; exit 0; fi; echo k > k.txt"
	files := houseRepoFiles(`digraph child {
  start [shape=Mdiamond]
  one    [shape=parallelogram, tool_command=` + dotQuote("echo ran >> "+counter+" && echo built > built.txt") + `]
  killer [shape=parallelogram, tool_command=` + dotQuote(killOnce) + `]
  mark   [shape=parallelogram, tool_command=` + dotQuote(`printf '{"status":"success","context_updates":{"review":"approved"}}' > "$KILROY_STAGE_STATUS_PATH"`) + `]
  exit   [shape=Msquare]
  start -> one -> killer -> mark -> exit
}
`)
	repo := newRepo(t, files)
	head := gitT(t, repo, "rev-parse", "HEAD")
	runDir := filepath.Join(t.TempDir(), "run")

	// --no-sandbox: the killer node kills kilroy-bot itself, which no node
	// can do inside the sandbox.
	code, _, stderr := kilroyBot(t, "run", "--no-sandbox", "--repo", repo, "--run-dir", runDir)
	if code != -1 {
		t.Fatalf("first run exited %d, want killed by a signal\nstderr:\n%s", code, stderr)
	}
	cp, err := runner.ReadCheckpoint(runDir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cp.State.Completed, []string{"start", "loop/start", "loop/one"}); diff != "" {
		t.Fatalf("checkpointed nodes at the kill (-got +want):\n%s", diff)
	}
	if cp.State.NextNode != "loop" || cp.State.Context["internal.manager.loop.next"] != "loop/killer" {
		t.Fatalf("checkpoint at the kill: next %q, child note %v; want loop and loop/killer",
			cp.State.NextNode, cp.State.Context["internal.manager.loop.next"])
	}

	code, stdout, stderr := kilroyBot(t, "resume", "--no-sandbox", runDir)
	if code != 0 {
		t.Fatalf("resume exited %d, want 0\nstderr:\n%s\nstdout:\n%s", code, stderr, stdout)
	}
	if got, err := os.ReadFile(counter); err != nil || string(got) != "ran\n" {
		t.Errorf("child node one's counter = %q (%v), want it to have run once", got, err)
	}
	want := []string{"start", "loop/start", "loop/one", "loop/killer", "loop/mark", "loop/exit", "loop", "approved", "exit"}
	if diff := cmp.Diff(runBranchNodes(t, repo, head), want); diff != "" {
		t.Errorf("checkpoint commits (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(runBranchFiles(t, repo), []string{".kilroy/child.dot", ".kilroy/ci.dot", "approved.txt", "built.txt", "k.txt"}); diff != "" {
		t.Errorf("run branch files (-got +want):\n%s", diff)
	}
}

// A house in a parallel branch, which `run` gives a worktree of its own:
// the child runs there and its work reaches the run through the fan-in.
func TestRunManagerLoopInParallelBranch(t *testing.T) {
	needSandbox(t)
	files := houseRepoFiles(childDOT("test -f built.txt"))
	files[".kilroy/ci.dot"] = dotFor(`
  fan   [shape=component]
  loop  [shape=house, stack.child_dotfile=".kilroy/child.dot"]
  other [shape=parallelogram, tool_command="echo other > other.txt"]
  join  [shape=tripleoctagon]
  after [shape=parallelogram, tool_command="test -f built.txt && test -f other.txt"]
  start -> fan
  fan -> loop -> join
  fan -> other -> join
  join -> after -> exit`)
	repo := newRepo(t, files)
	runDir := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runCmd("run", "--repo", repo, "--run-dir", runDir)
	if code != 0 {
		t.Fatalf("exit code %d, want 0\nstderr:\n%s\nstdout:\n%s", code, stderr, stdout)
	}
	if !strings.Contains(stdout, "`loop/test`") {
		t.Errorf("the report does not show the child's verify node:\n%s", stdout)
	}
}
