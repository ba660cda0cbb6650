package runner

import (
	"errors"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// An answer for a human gate of a manager loop's child (<house>/<gate>)
// cannot be checked before the house reads its child: it is accepted.
// Any other unknown node is still a usage error.
func TestAnswersCheckChildGate(t *testing.T) {
	p, _, err := attractor.Load("ci.dot", []byte(`digraph ci {
  start [shape=Mdiamond]
  loop [shape=house, stack.child_dotfile=".kilroy/child.dot"]
  exit [shape=Msquare]
  start -> loop -> exit
}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := (Answers{ByNode: map[string]string{"loop/approve": "yes"}}).Check(p); err != nil {
		t.Errorf("answer for a child's gate: %v, want accepted", err)
	}
	for _, node := range []string{"exit/approve", "nope/approve", "approve"} {
		if err := (Answers{ByNode: map[string]string{node: "yes"}}).Check(p); !errors.Is(err, ErrUsage) {
			t.Errorf("answer for %s: %v, want a usage error", node, err)
		}
	}
}
