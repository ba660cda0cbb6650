package server

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// gatePipeline waits at approve and goes to deploy on yes, skip on no.
const gatePipeline = `digraph ci {
  start [shape=Mdiamond]
  exit [shape=Msquare]
  approve [shape=hexagon, label="Deploy to staging?"]
  deploy [shape=parallelogram, tool_command="echo deployed > deployed.txt"]
  skip [shape=parallelogram, tool_command="echo skipped > skipped.txt"]
  start -> approve
  approve -> deploy [label="yes"]
  approve -> skip [label="no"]
  deploy -> exit
  skip -> exit
}
`

// waitComments polls the bot's comments until there are n, and returns
// the last.
func (e *serverEnv) waitComments(n int) string {
	e.t.Helper()
	deadline := time.Now().Add(serverWait)
	for len(e.botComments()) < n {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out after %s waiting for bot comment %d; have %q", serverWait, n, e.botComments())
		}
		time.Sleep(10 * time.Millisecond)
	}
	got := e.botComments()
	if len(got) != n {
		e.t.Fatalf("bot comments = %q, want %d", got, n)
	}
	return got[n-1]
}

func (e *serverEnv) reactions() []string {
	var out []string
	for _, r := range e.gh.Reactions("octo", "widgets") {
		out = append(out, r.Content)
	}
	return out
}

// TestServerAnswerCommand: a run waiting at a hexagon asks on the pull
// request; a reader's answer is refused, an unknown node or choice gets a
// reply with what waits and a "did you mean", and a writer's answer is
// acknowledged with eyes and sends the run down the chosen edge.
func TestServerAnswerCommand(t *testing.T) {
	e := newServerEnv(t)
	e.seed(map[string]string{".kilroy/ci.dot": gatePipeline})
	e.gh.SetPermission("octo", "widgets", "alice", "write")
	e.gh.SetPermission("octo", "widgets", "bob", "read")
	pr := e.openPR(11, "alice", map[string]string{"README.md": "x\n"})
	e.handle(e.prEvent("opened", pr))
	run := e.newRun("ci", 0)
	e.waitNode(run.RunID, "approve")
	if q := e.waitComments(1); !strings.Contains(q, "`/kilroy answer approve yes`") || !strings.Contains(q, "Deploy to staging?") {
		t.Fatalf("question comment:\n%s\nwant the question and the command that answers yes", q)
	}

	answer := func(sender, node, choice string) {
		e.handle(e.commentEvent(11, sender, Command{Verb: VerbAnswer, Node: node, Choice: choice}))
	}
	replies := []struct {
		sender, node, choice string
		want                 []string
	}{
		{"bob", "approve", "yes", []string{"@bob", "write access", "answer"}},
		{"alice", "aprove", "yes", []string{"waits at `aprove`", "Did you mean `approve`?", "`ci` at `approve`",
			"`/kilroy answer approve yes`, `/kilroy answer approve no`"}},
		{"alice", "approve", "yse", []string{"`yse` is not a choice of `approve`", "Did you mean `/kilroy answer approve yes`?"}},
		{"alice", "approve", "", []string{"`/kilroy answer approve` needs a choice"}},
	}
	for i, r := range replies {
		answer(r.sender, r.node, r.choice)
		got := e.waitComments(2 + i)
		for _, w := range r.want {
			if !strings.Contains(got, w) {
				t.Errorf("reply to %s answering %q %q:\n%s\nwant it to contain %q", r.sender, r.node, r.choice, got, w)
			}
		}
	}
	if got := e.reactions(); len(got) != 0 {
		t.Errorf("refused answers got reactions %q", got)
	}

	answer("alice", "approve", "YES")
	if got := e.reactions(); !slices.Equal(got, []string{"eyes"}) {
		t.Errorf("reactions = %q, want eyes on the accepted answer", got)
	}
	calls := e.reps.waitEnd(t, run.RunID)
	if !slices.Contains(calls, "node_finished deploy success") || slices.Contains(calls, "node_started skip") ||
		calls[len(calls)-1] != "close" {
		t.Errorf("run calls = %q, want it to go through deploy, not skip, and close", calls)
	}
	if n := len(e.botComments()); n != 1+len(replies) {
		t.Errorf("an accepted answer got a reply: %q", e.botComments()[1+len(replies):])
	}

	answer("alice", "approve", "no")
	if got := e.waitComments(2 + len(replies)); !strings.Contains(got, "Nothing to answer") {
		t.Errorf("answer after the run ended: reply %q, want nothing to answer", got)
	}
	e.waitRevoked()
}
