package runner

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/internal/gittest"
)

// TestForkFailedResumesBeforeTheFailure runs a pipeline whose last node
// fails, then a new run forked from its failure: the nodes before run no
// more, the new branch starts at the failed run's checkpoint before the
// failed node, and the new run's own commits follow it.
func TestForkFailedResumesBeforeTheFailure(t *testing.T) {
	counter := filepath.Join(t.TempDir(), "one.count") // outside the worktree
	gate := filepath.Join(t.TempDir(), "gate")
	repo := gittest.NewRepo(t, map[string]string{".kilroy/ci.dot": pipeline(`
  one [shape=parallelogram, tool_command=` + quote("echo ran >> "+counter+" && echo one > one.txt") + `]
  two [shape=octagon, command=` + quote("test -f one.txt && test -e "+gate) + `]
  start -> one -> two -> exit`)})
	o := localOptions(t, repo)
	first, res := runLocal(t, o)
	if res.Status != attractor.StatusFail || res.FailedNode != "two" {
		t.Fatalf("first run %s at %q, want a failure at two", res.Status, res.FailedNode)
	}
	oneSHA := checkpointCommits(t, repo, "HEAD", first.Branch)["one"]

	to := RunDir(filepath.Join(t.TempDir(), "run2"))
	fk, err := ForkFailed(string(first.Dir), to, "RUN2", repo)
	if err != nil {
		t.Fatalf("ForkFailed: %v", err)
	}
	if fk.Failed != "two" || fk.From != first.RunID || fk.Resumed != oneSHA {
		t.Errorf("fork of %s at %s from %s, want two failed, from %s at one's checkpoint %s", fk.Failed, fk.Resumed, fk.From, first.RunID, oneSHA)
	}
	if got := fk.Checkpoint.Branch; got != filepath.Dir(first.Branch)+"/RUN2" {
		t.Errorf("new run branch %s", got)
	}
	var nodes []string
	for _, n := range fk.History.Nodes {
		nodes = append(nodes, n.ID)
	}
	if diff := cmp.Diff(nodes, []string{"start", "one"}); diff != "" {
		t.Errorf("history nodes (-got +want):\n%s", diff)
	}

	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	o2 := o
	o2.RunDir = string(to)
	p, res2 := resume(t, to, o2)
	if res2.Status != attractor.StatusSuccess {
		t.Fatalf("forked run %s (%s), want success", res2.Status, res2.FailureReason)
	}
	if got := readFile(t, counter); got != "ran\n" {
		t.Errorf("one ran %q times over both runs, want once", got)
	}
	if got := checkpointCommits(t, repo, "HEAD", p.Branch)["one"]; got != oneSHA {
		t.Errorf("one's checkpoint on the new branch is %s, want the failed run's %s", got, oneSHA)
	}
	own := checkpointCommits(t, repo, oneSHA, p.Branch)
	if _, ok := own["two"]; !ok || len(own) != 2 {
		t.Errorf("the new run's own commits are of %v, want two and exit only", own)
	}

	// A run that did not fail has no failure to resume from.
	if _, err := ForkFailed(string(p.Dir), RunDir(filepath.Join(t.TempDir(), "run3")), "RUN3", repo); !errors.Is(err, ErrNoFailure) {
		t.Errorf("fork of a successful run: %v, want ErrNoFailure", err)
	}
}

// checkpointCommits maps the nodes of the checkpoint commits of branch
// after base to their commits (the newest of a node's).
func checkpointCommits(t *testing.T, repo, base, branch string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(gittest.Git(t, repo, "log", "--reverse", "--format=%H %s", base+".."+branch)), "\n") {
		sha, subject, _ := strings.Cut(line, " ")
		_, rest, ok := strings.Cut(subject, "): ")
		node, _, _ := strings.Cut(rest, " (")
		if ok {
			out[node] = sha
		}
	}
	return out
}
