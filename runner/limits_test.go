package runner

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/internal/gittest"
)

// TestNodeTimeoutSurvivesResume: limits.node_timeout gives nodes without
// a timeout of their own that timeout, and a resumed run keeps the limits
// it started with even after the repository's config changed.
func TestNodeTimeoutSurvivesResume(t *testing.T) {
	config := func(d string) string { return "version: 1\nlimits:\n  node_timeout: " + d + "\n" }
	repo := gittest.NewRepo(t, map[string]string{
		".kilroy/config.yml": config("7m"),
		".kilroy/ci.dot": pipeline(`
  one [shape=parallelogram, tool_command="true"]
  two [shape=parallelogram, tool_command="true"]
  three [shape=parallelogram, tool_command="true", timeout="30s"]
  start -> one -> two -> three -> exit`),
	})
	timeouts := func(p *Prepared) map[string]time.Duration {
		m := map[string]time.Duration{}
		for _, id := range []string{"one", "two", "three"} {
			m[id] = p.Pipeline.Node(id).Timeout
		}
		return m
	}
	want := map[string]time.Duration{"one": 7 * time.Minute, "two": 7 * time.Minute, "three": 30 * time.Second}
	o := localOptions(t, repo)
	first := interruptedRun(t, o)
	if diff := cmp.Diff(timeouts(first), want); diff != "" {
		t.Errorf("node timeouts of the run (-got +want):\n%s", diff)
	}
	gittest.CommitFiles(t, repo, "shorter", map[string]string{".kilroy/config.yml": config("1m")})

	p, err := PrepareResume(context.Background(), string(first.Dir), o)
	if err != nil {
		t.Fatal(err)
	}
	defer p.cleanup(context.Background())
	if diff := cmp.Diff(timeouts(p), want); diff != "" {
		t.Errorf("node timeouts of the resumed run (-got +want):\n%s", diff)
	}
}

// TestRunTimeout: limits.run_timeout ends a run whose node outlives it;
// the run fails as canceled and stays resumable from its last checkpoint.
func TestRunTimeout(t *testing.T) {
	repo := gittest.NewRepo(t, map[string]string{
		".kilroy/config.yml": "version: 1\nlimits:\n  run_timeout: 1s\n  node_timeout: 1s\n",
		".kilroy/ci.dot": pipeline(`
  one [shape=parallelogram, tool_command="true"]
  slow [shape=parallelogram, tool_command="sleep 60", timeout="5m"]
  start -> one -> slow -> exit`),
	})
	p, res := runLocal(t, localOptions(t, repo))
	if res.Status != attractor.StatusFail || res.FailedNode != "slow" || res.FailureClass != attractor.ClassCanceled {
		t.Fatalf("run = %s at %q, %s (%s); want fail at slow, canceled", res.Status, res.FailedNode, res.FailureClass, res.FailureReason)
	}
	if !strings.Contains(res.FailureReason, "limits.run_timeout of 1s reached") {
		t.Errorf("failure reason %q does not name limits.run_timeout", res.FailureReason)
	}
	if res.Duration > 30*time.Second {
		t.Errorf("run took %s with run_timeout 1s", res.Duration)
	}
	cp, err := ReadCheckpoint(string(p.Dir))
	if err != nil {
		t.Fatal(err)
	}
	if cp.State.NextNode != "slow" || cp.State.Finished {
		t.Errorf("checkpoint next node %q, finished %v; want slow, not finished", cp.State.NextNode, cp.State.Finished)
	}
}
