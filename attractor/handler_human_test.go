package attractor

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// blockingInterviewer waits for an answer that never comes, as a pull
// request interviewer does, and reports how its wait ended.
type blockingInterviewer struct{}

func (blockingInterviewer) Ask(ctx context.Context, _ Question) (Answer, error) {
	<-ctx.Done()
	return Answer{}, ctx.Err()
}

// TestHumanGateTimeout: the node's timeout bounds an interviewer's wait;
// when it passes, human.default_choice routes the run, and without one the
// node fails once its retries are spent.
func TestHumanGateTimeout(t *testing.T) {
	gate := func(attrs string) string {
		return `digraph t {
		start [shape=Mdiamond]; done [shape=Msquare]
		gate [shape=hexagon, label="Deploy?", timeout="20ms"` + attrs + `]
		ship [shape=parallelogram, tool_command="true"]
		hold [shape=parallelogram, tool_command="true"]
		start -> gate
		gate -> ship [label="yes"]
		gate -> hold [label="no"]
		ship -> done; hold -> done
	}`
	}
	h := newHarness(t)
	h.cfg.Interviewer = blockingInterviewer{}
	res := h.run(mustLoad(t, gate(`, human.default_choice="no"`)))
	if diff := cmp.Diff(res.Completed, []string{"start", "gate", "hold", "done"}); diff != "" {
		t.Errorf("with a default choice, completed (-got +want):\n%s", diff)
	}

	h = newHarness(t)
	h.cfg.Interviewer = blockingInterviewer{}
	res = h.run(mustLoad(t, gate("")))
	if o := res.Outcomes["gate"]; o.Status != StatusFail || !strings.HasSuffix(o.FailureReason, "human gate timed out and has no human.default_choice") {
		t.Errorf("without a default choice, gate = %s %q; want it failed, timed out", o.Status, o.FailureReason)
	}
}
