package attractor

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// prewarmHost is an execHost that records what the engine prewarms, and
// when: before each Exec, the prewarms made so far.
type prewarmHost struct {
	*execHost
	prewarms []ExecRequest
}

func (h *prewarmHost) Prewarm(req ExecRequest) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.prewarms = append(h.prewarms, req)
}

// While it checkpoints a node, the engine hands a Prewarmer host the very
// request the next node's first process makes: for built-in tool and
// verify nodes, not for a node a custom handler runs, nor for one its
// visit limit stops.
func TestEnginePrewarmsTheNextNodesFirstProcess(t *testing.T) {
	h := newHarness(t)
	host := &prewarmHost{execHost: h.host}
	h.cfg.Host = host
	h.cfg.Handlers = map[string]Handler{"custom": HandlerFunc(func(ctx context.Context, s *Stage) (Outcome, error) {
		if _, err := s.Shell(ctx, "", "true", 0); err != nil {
			return Outcome{}, err
		}
		return Outcome{Status: StatusSuccess}, nil
	})}
	p := mustLoad(t, chain("",
		`t1 [shape=parallelogram, tool_command="echo one"]`,
		`v1 [type="verify", command="test -n \"$KILROY_PREDECESSOR_NODE\""]`,
		`c1 [type="custom"]`,
		`t2 [shape=parallelogram, tool_command="exit 0"]`,
	), "custom")
	if res := h.run(p); res.Status != StatusSuccess {
		t.Fatalf("run: %+v", res)
	}
	if len(host.execs) != 4 {
		t.Fatalf("%d execs, want 4 (t1, v1, c1, t2)", len(host.execs))
	}
	var want []ExecRequest
	for _, e := range host.execs {
		if e.StageEnv[EnvNodeID] != "c1" {
			want = append(want, e)
		}
	}
	if diff := cmp.Diff(want, host.prewarms); diff != "" {
		t.Errorf("prewarmed (+) against the tool and verify nodes' Exec requests (-):\n%s", diff)
	}
}

// A node its visit limit will stop is not prewarmed: nothing of it runs.
func TestEngineDoesNotPrewarmPastTheVisitLimit(t *testing.T) {
	h := newHarness(t)
	host := &prewarmHost{execHost: h.host}
	h.cfg.Host = host
	p := loadAnyway(t, `digraph t {
		start [shape=Mdiamond]
		done [shape=Msquare]
		a [shape=parallelogram, tool_command="true", max_node_visits=2]
		start -> a
		a -> a
	}`)
	h.run(p)
	if len(host.execs) != 2 {
		t.Fatalf("%d execs of a, want 2 (its visit limit)", len(host.execs))
	}
	if len(host.prewarms) != 2 {
		t.Errorf("%d prewarms, want 2: before each visit of a, none for the third that the limit stops", len(host.prewarms))
	}
}
