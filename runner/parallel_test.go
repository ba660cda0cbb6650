package runner

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/internal/gittest"
)

// meetCommand marks that branch me is running and waits, up to a
// deadline, for branch other's mark: it succeeds only when both branches
// run at the same time.
func meetCommand(marks, me, other string) string {
	return "touch " + filepath.Join(marks, me) + " && for i in $(seq 1 400); do " +
		"test -f " + filepath.Join(marks, other) + " && exit 0; sleep 0.05; done; " +
		"echo 'branch " + other + " never ran alongside " + me + "' >&2; exit 1"
}

// fanPipeline is start -> fan -> {a, b} -> join -> exit.
func fanPipeline(a, b, joinAttrs string) string {
	return pipeline(`
  fan [shape=component]
  a [shape=parallelogram, tool_command=` + quote(a) + `]
  b [shape=parallelogram, tool_command=` + quote(b) + `]
  join [shape=tripleoctagon` + joinAttrs + `]
  start -> fan
  fan -> a; fan -> b
  a -> join; b -> join
  join -> exit`)
}

func TestParallelBranchesRunConcurrentlyAndMerge(t *testing.T) {
	marks := t.TempDir()
	a := "echo a > a.txt && " + meetCommand(marks, "a", "b")
	b := "echo b > b.txt && mkdir -p node_modules && echo x > node_modules/x.js && " + meetCommand(marks, "b", "a")
	repo := gittest.NewRepo(t, map[string]string{
		"README.md":      "hello\n",
		".kilroy/ci.dot": fanPipeline(a, b, `, verify_command="test -f a.txt && test -f b.txt"`),
	})
	base := gittest.Git(t, repo, "rev-parse", "HEAD")
	p, res := runLocal(t, localOptions(t, repo))
	if res.Status != attractor.StatusSuccess {
		t.Fatalf("run status = %s (%s), want success", res.Status, res.FailureReason)
	}
	branchA := "kilroy/branch/ci/" + p.RunID + "/fan/0-a"
	branchB := "kilroy/branch/ci/" + p.RunID + "/fan/1-b"
	if diff := cmp.Diff(runBranches(t, repo), []string{branchA, branchB, p.Branch}); diff != "" {
		t.Errorf("kilroy branches (-got +want):\n%s", diff)
	}
	trees := map[string][]string{
		p.Branch: treeFiles(t, repo, p.Branch),
		branchA:  treeFiles(t, repo, branchA),
		branchB:  treeFiles(t, repo, branchB),
	}
	want := map[string][]string{
		p.Branch: {".kilroy/ci.dot", "README.md", "a.txt", "b.txt"},
		branchA:  {".kilroy/ci.dot", "README.md", "a.txt"},
		branchB:  {".kilroy/ci.dot", "README.md", "b.txt"},
	}
	if diff := cmp.Diff(trees, want); diff != "" {
		t.Errorf("files per branch (-got +want):\n%s", diff)
	}
	gotLog := strings.Split(gittest.Git(t, repo, "log", "--reverse", "--first-parent", "--format=%s", base+".."+p.Branch), "\n")
	wantLog := []string{
		checkpointMsg(p.RunID, "start", "success").Subject,
		checkpointMsg(p.RunID, "fan", "success").Subject,
		"kilroy: merge " + branchA,
		"kilroy: merge " + branchB,
		checkpointMsg(p.RunID, "join", "success").Subject,
		checkpointMsg(p.RunID, "exit", "success").Subject,
	}
	if diff := cmp.Diff(gotLog, wantLog); diff != "" {
		t.Errorf("run branch history (-got +want):\n%s", diff)
	}
	// Branches fork from the checkpoint before the parallel node (start's).
	forked := strings.Fields(gittest.Git(t, repo, "log", "--reverse", "--first-parent", "--format=%H", base+".."+p.Branch))[0]
	if diff := cmp.Diff(branchCommits(t, repo, forked, branchB), []commitMsg{checkpointMsg(p.RunID, "b", "success")}); diff != "" {
		t.Errorf("branch b checkpoints (-got +want):\n%s", diff)
	}
	if o := res.Outcomes["join"]; !strings.Contains(o.Notes, "verify_command passed") {
		t.Errorf("join notes = %q, want its verify_command to have run after the merge", o.Notes)
	}
	if _, err := os.Stat(filepath.Join(string(p.Dir), "branches", "fan-0")); !os.IsNotExist(err) {
		t.Errorf("branch worktree still there after the run (stat: %v)", err)
	}
	cp, err := ReadCheckpoint(string(p.Dir))
	if err != nil {
		t.Fatal(err)
	}
	if tip := gittest.Git(t, repo, "rev-parse", p.Branch); cp.CommitSHA != tip {
		t.Errorf("checkpoint.json commit = %s, want the run branch tip %s", cp.CommitSHA, tip)
	}
}

func TestParallelBranchesConflictFailsFanIn(t *testing.T) {
	repo := gittest.NewRepo(t, map[string]string{
		"README.md":      "hello\n",
		".kilroy/ci.dot": fanPipeline("echo from-a > same.txt", "echo from-b > same.txt", ""),
	})
	p, res := runLocal(t, localOptions(t, repo))
	o := res.Outcomes["join"]
	got := []any{res.Status, res.FailedNode, o.FailureClass, o.Details["conflict_paths"]}
	want := []any{attractor.StatusFail, "join", attractor.ClassDeterministic, []string{"same.txt"}}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("run status, failed node, class, conflict paths (-got +want):\n%s", diff)
	}
	for _, s := range []string{"same.txt", "branch b"} {
		if !strings.Contains(res.FailureReason, s) {
			t.Errorf("failure reason %q does not name %q", res.FailureReason, s)
		}
	}
	if files := treeFiles(t, repo, p.Branch); slices.Contains(files, "same.txt") {
		t.Errorf("run branch holds a half-merged same.txt: %v", files)
	}
}
