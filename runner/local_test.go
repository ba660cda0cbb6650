package runner

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/internal/gittest"
)

// TestLocalRun is the main local-run scenario: one checkpoint commit per
// executed node on the run branch, build output kept off it by the default
// excludes, the user's repository untouched, progress.ndjson and
// checkpoint.json describing the run.
func TestLocalRun(t *testing.T) {
	build := "mkdir -p node_modules __pycache__ src && echo x > node_modules/x.js && " +
		"echo a > __pycache__/a.pyc && echo 'package ok' > src/ok.go"
	repo := gittest.NewRepo(t, map[string]string{
		"README.md":  "hello\n",
		".gitignore": "*.log\n",
		".kilroy/ci.dot": pipeline(`
  build [shape=parallelogram, tool_command=` + quote(build) + `]
  check [shape=octagon, command="test -f src/ok.go && test -f README.md"]
  start -> build -> check -> exit`),
	})
	// Uncommitted work of the user's: the run tests HEAD and leaves these be.
	gittest.WriteFile(t, filepath.Join(repo, "README.md"), "hello, edited\n")
	gittest.WriteFile(t, filepath.Join(repo, "notes.txt"), "untracked\n")
	gittest.WriteFile(t, filepath.Join(repo, "debug.log"), "ignored\n")
	before := snapshot(t, repo)

	o := localOptions(t, repo)
	p, res := runLocal(t, o)
	if res.Status != attractor.StatusSuccess {
		t.Fatalf("run status = %s (%s), want success", res.Status, res.FailureReason)
	}

	if diff := cmp.Diff(snapshot(t, repo), before); diff != "" {
		t.Errorf("user's repository changed (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(runBranches(t, repo), []string{"kilroy/run/ci/" + p.RunID}); diff != "" {
		t.Errorf("run branches (-got +want):\n%s", diff)
	}
	if p.Branch != "kilroy/run/ci/"+p.RunID {
		t.Errorf("Branch = %q, want kilroy/run/ci/%s", p.Branch, p.RunID)
	}

	nodes := []string{"start", "build", "check", "exit"}
	var wantCommits []commitMsg
	for _, n := range nodes {
		wantCommits = append(wantCommits, checkpointMsg(p.RunID, n, "success"))
	}
	if diff := cmp.Diff(branchCommits(t, repo, before.Head, p.Branch), wantCommits); diff != "" {
		t.Errorf("checkpoint commits (-got +want):\n%s", diff)
	}
	wantTree := []string{".gitignore", ".kilroy/ci.dot", "README.md", "src/ok.go"}
	if diff := cmp.Diff(treeFiles(t, repo, p.Branch), wantTree); diff != "" {
		t.Errorf("run branch files (-got +want):\n%s", diff)
	}
	if got := gittest.Git(t, repo, "show", p.Branch+":README.md"); got != "hello" {
		t.Errorf("run branch README.md = %q, want HEAD's %q", got, "hello")
	}
	if _, err := os.Stat(p.Dir.Worktree()); !os.IsNotExist(err) {
		t.Errorf("worktree still there after the run (stat: %v)", err)
	}

	tip := gittest.Git(t, repo, "rev-parse", p.Branch)
	checkProgress(t, p, tip, nodes)

	cp, err := ReadCheckpoint(string(p.Dir))
	if err != nil {
		t.Fatal(err)
	}
	if cp.CommitSHA != tip || cp.BaseSHA != before.Head || cp.Branch != p.Branch || cp.RunID != p.RunID {
		t.Errorf("checkpoint commit, base, branch, run = %s %s %s %s, want %s %s %s %s",
			cp.CommitSHA, cp.BaseSHA, cp.Branch, cp.RunID, tip, before.Head, p.Branch, p.RunID)
	}
	if diff := cmp.Diff(cp.State.Completed, nodes); diff != "" {
		t.Errorf("checkpoint completed nodes (-got +want):\n%s", diff)
	}
	if !cp.State.Finished {
		t.Error("checkpoint of a finished run is not marked finished")
	}
	if cp.PolicyHash != p.policy.Hash() || cp.Policy.Hash() != cp.PolicyHash {
		t.Errorf("policy hash %s, snapshot hashes to %s, run's policy to %s", cp.PolicyHash, cp.Policy.Hash(), p.policy.Hash())
	}
	if got := readFile(t, p.Dir.Graph()); got != readFile(t, filepath.Join(repo, ".kilroy/ci.dot")) {
		t.Errorf("graph.dot = %q, want the pipeline source", got)
	}
}

// checkProgress checks progress.ndjson of a linear run through nodes that
// all succeed.
func checkProgress(t *testing.T, p *Prepared, tip string, nodes []string) {
	t.Helper()
	evs := readProgress(t, p.Dir)
	type step struct{ Type, Node, Status, Class, From, To, Method string }
	var got []step
	var shas []string
	for _, ev := range evs {
		if ev.RunID != p.RunID {
			t.Errorf("event %s has run id %q, want %q", ev.Type, ev.RunID, p.RunID)
		}
		if ev.Time == "" {
			t.Errorf("event %s has no time", ev.Type)
		}
		s := step{Type: ev.Type, Node: ev.Node, Status: ev.Status, Class: ev.FailureClass, From: ev.From, To: ev.To, Method: ev.Method}
		switch ev.Type {
		case "checkpoint":
			if ev.SHA == "" {
				t.Errorf("checkpoint event of %s has no sha", ev.Node)
			}
			shas = append(shas, ev.SHA)
		case "run_started":
			if ev.BaseSHA == "" || ev.Branch != p.Branch || ev.Pipeline != "ci" {
				t.Errorf("run_started = %+v, want base sha, branch %s, pipeline ci", ev, p.Branch)
			}
		case "run_finished":
			s.Node = "" // the failed node; none here
		}
		got = append(got, s)
	}
	want := []step{{Type: "run_started"}}
	for i, n := range nodes {
		want = append(want,
			step{Type: "node_started", Node: n},
			step{Type: "node_finished", Node: n, Status: "success"},
			step{Type: "checkpoint", Node: n, Status: "success"})
		if i+1 < len(nodes) {
			want = append(want, step{Type: "edge_selected", From: n, To: nodes[i+1], Method: string(attractor.ByWeight)})
		}
	}
	want = append(want, step{Type: "run_finished", Status: "success"})
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("progress events (-got +want):\n%s", diff)
	}
	if len(shas) > 0 && shas[len(shas)-1] != tip {
		t.Errorf("last checkpoint event sha = %s, want the branch tip %s", shas[len(shas)-1], tip)
	}
}
