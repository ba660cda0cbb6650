package checks

import (
	"testing"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// A verify node of a manager loop's child (<house>/<child>) is not in the
// pipeline the publisher was made for; it gets its own check when it
// starts, and the check concludes with the node.
func TestPublisherChildVerifyNodeGetsCheck(t *testing.T) {
	e := newGHEnv(t)
	p := load(t, `digraph ci {
  start [shape=Mdiamond]
  loop [shape=house, stack.child_dotfile="child.dot"]
  done [shape=Msquare]
  start -> loop -> done
}`)
	pub := e.publisher(p, nil, e.options())
	ctx := t.Context()
	mustOK(t, pub.Queued(ctx))
	if got := len(e.runs()); got != 1 {
		t.Fatalf("Queued made %d check runs, want 1 (summary)", got)
	}
	child := &attractor.Node{ID: "loop/test", Kind: attractor.KindVerify, Command: "go test ./..."}
	tool := &attractor.Node{ID: "loop/build", Kind: attractor.KindTool, ToolCommand: "go build ./..."}
	for _, n := range []*attractor.Node{tool, child} {
		mustOK(t, pub.NodeStarted(ctx, attractor.NodeStarted{RunID: "r1", Node: n, Visit: 1}))
	}
	mustOK(t, pub.AttemptFinished(ctx, attractor.AttemptFinished{RunID: "r1", Node: child, Attempt: 1, Final: true,
		Outcome: attractor.Outcome{Status: attractor.StatusFail, FailureReason: "tests failed"}}))
	mustOK(t, pub.RunFinished(ctx, &attractor.RunResult{RunID: "r1", Status: attractor.StatusFail, FailedNode: "loop",
		FailureReason: "node loop: child child.dot failed: node loop/test failed: tests failed"}))
	mustOK(t, pub.Close(ctx))

	r := e.run("kilroy/ci/loop/test")
	if r == nil {
		t.Fatalf("no check for the child's verify node; checks: %d", len(e.runs()))
	}
	if r.Status != StatusCompleted || r.Conclusion != ConclusionFailure || r.ExternalID != "r1/loop/test" {
		t.Errorf("kilroy/ci/loop/test: %s/%s external_id %q, want completed/failure r1/loop/test", r.Status, r.Conclusion, r.ExternalID)
	}
	if got := len(e.runs()); got != 2 {
		t.Errorf("%d check runs, want 2: the summary and the child's verify node (not its tool node)", got)
	}
}
