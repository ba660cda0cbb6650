package attractor

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFailNeverFollowsUnconditionalEdge(t *testing.T) {
	const fail = `exit 2`
	for _, tc := range []struct {
		name       string
		graph      string // graph attributes
		work       string // extra work attributes
		edges      string
		wantPath   []string
		wantStatus Status
		wantEdge   string // the edge leaving work, "" when none
		wantReason string
	}{
		{
			name:       "unconditional edge refused",
			edges:      "work -> next",
			wantPath:   []string{"start", "work"},
			wantStatus: StatusFail,
			wantReason: "node work failed: tool_command exited with status 2",
		},
		{
			name:       "condition edge taken",
			edges:      `work -> next; work -> repair [condition="outcome=fail"]`,
			wantPath:   []string{"start", "work", "repair", "done"},
			wantStatus: StatusSuccess,
			wantEdge:   "work->repair condition",
		},
		{
			name:       "node retry_target",
			work:       "retry_target=repair,",
			edges:      "work -> next",
			wantPath:   []string{"start", "work", "repair", "done"},
			wantStatus: StatusSuccess,
			wantEdge:   "work->repair retry_target",
		},
		{
			name:       "fallback_retry_target when retry_target names no node",
			work:       "retry_target=nowhere, fallback_retry_target=repair,",
			edges:      "work -> next",
			wantPath:   []string{"start", "work", "repair", "done"},
			wantStatus: StatusSuccess,
			wantEdge:   "work->repair retry_target",
		},
		{
			name:       "graph retry_target",
			graph:      "retry_target=repair",
			edges:      "work -> next",
			wantPath:   []string{"start", "work", "repair", "done"},
			wantStatus: StatusSuccess,
			wantEdge:   "work->repair retry_target",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			p := loadAnyway(t, fmt.Sprintf(`digraph t {
				%s
				start [shape=Mdiamond]; done [shape=Msquare]
				work [shape=parallelogram, %s tool_command=%q]
				next [shape=parallelogram, tool_command="true"]
				repair [shape=parallelogram, tool_command="true"]
				start -> work
				%s
				next -> done; repair -> done
			}`, tc.graph, tc.work, fail, tc.edges))
			res := h.run(p)
			if diff := cmp.Diff(res.Completed, tc.wantPath); diff != "" {
				t.Errorf("path (-got +want):\n%s", diff)
			}
			if res.Status != tc.wantStatus || !strings.Contains(res.FailureReason, tc.wantReason) {
				t.Errorf("run = %s %q, want %s containing %q", res.Status, res.FailureReason, tc.wantStatus, tc.wantReason)
			}
			var gotEdge string
			for _, e := range h.rec.edgeList() {
				if strings.HasPrefix(e, "work->") {
					gotEdge = e
				}
			}
			if gotEdge != tc.wantEdge {
				t.Errorf("edge from work = %q, want %q", gotEdge, tc.wantEdge)
			}
		})
	}
}

func TestNoUsableEdgeEndsRun(t *testing.T) {
	for _, tc := range []struct {
		name, edges, want string
	}{
		{"no outgoing edge", "", "node work finished with outcome success but has no outgoing edge"},
		{"no condition matches", `work -> done [condition="outcome=fail"]`, "node work finished with outcome success and no outgoing edge matches (conditions: done [outcome=fail])"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			res := h.run(loadAnyway(t, `digraph t {
				start [shape=Mdiamond]; done [shape=Msquare]
				work [shape=parallelogram, tool_command="true"]
				start -> work
				`+tc.edges+`
			}`))
			if res.Status != StatusFail || !strings.Contains(res.FailureReason, tc.want) || res.FailedNode != "work" {
				t.Errorf("run = %s %q (node %q), want fail containing %q", res.Status, res.FailureReason, res.FailedNode, tc.want)
			}
		})
	}
}

// loopPipeline fails work through a status file until the cycle breaker
// or a visit limit stops it: work -> fix -> work.
const loopPipeline = `digraph t {
	%s
	start [shape=Mdiamond]; done [shape=Msquare]
	work [shape=parallelogram, tool_command=%q]
	fix [shape=parallelogram, tool_command="true"]
	start -> work
	work -> done [condition="outcome=success"]
	work -> fix [condition="outcome=fail"]
	fix -> work
}`

func TestCycleBreaker(t *testing.T) {
	for _, tc := range []struct {
		name, cmd, graph string
		wantFails        int
		wantSig          string
	}{
		{
			name: "varying prose, stable signature",
			cmd: `n=$(( $(cat count 2>/dev/null || echo 0) + 1 )); echo $n > count; ` +
				`words=(alpha beta gamma delta); ` +
				`echo "{\"status\":\"fail\",\"failure_reason\":\"cargo says ${words[$n]} went wrong\",\"failure_signature\":\"environmental_tooling_blocks\"}" > $KILROY_STAGE_STATUS_PATH`,
			wantFails: 3,
			wantSig:   "environmental_tooling_blocks",
		},
		{
			name:      "numbers and hashes folded",
			cmd:       `n=$(( $(cat count 2>/dev/null || echo 0) + 1 )); echo $n > count; echo "build $n failed at commit $(echo $n | sha1sum | cut -c1-12) after ${n}0ms" >&2; exit 1`,
			graph:     "failure_signature_limit=4",
			wantFails: 4,
			wantSig:   "tool_command exited with status <n>: build <n> failed at commit <hex> after <n>ms",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			res := h.run(mustLoad(t, fmt.Sprintf(loopPipeline, tc.graph, tc.cmd)))
			var fails int
			for _, n := range res.Completed {
				if n == "work" {
					fails++
				}
			}
			if fails != tc.wantFails || res.Status != StatusFail {
				t.Fatalf("run %s after %d failures of work, want fail after %d: %s", res.Status, fails, tc.wantFails, res.FailureReason)
			}
			if !strings.Contains(res.FailureReason, fmt.Sprintf("same failure signature %q", tc.wantSig)) {
				t.Errorf("reason %q does not name the signature %q", res.FailureReason, tc.wantSig)
			}
		})
	}
}

// TestMaxNodeVisits stops a loop at its visit limit, and the message names
// the attribute as the author wrote it: tracker and Fabro write max_visits.
func TestMaxNodeVisits(t *testing.T) {
	for _, tc := range []struct{ attrs, want string }{
		{"max_node_visits=2", "(max_node_visits=2)"},
		{"max_visits=2", "(max_visits=2)"},
		{"work [max_node_visits=2]", "(max_node_visits=2)"},
		{"work [max_visits=2]", "(max_visits=2)"},
		{"max_node_visits=5; work [max_visits=2]", "(max_visits=2)"},
	} {
		t.Run(tc.attrs, func(t *testing.T) {
			h := newHarness(t)
			cmd := `echo "{\"status\":\"fail\",\"failure_reason\":\"attempt $RANDOM$RANDOM\"}" > $KILROY_STAGE_STATUS_PATH`
			res := h.run(mustLoad(t, fmt.Sprintf(loopPipeline, tc.attrs, cmd)))
			if res.Status != StatusFail || !strings.Contains(res.FailureReason, "node work reached its visit limit "+tc.want) {
				t.Fatalf("run = %s %q, want the visit limit %s", res.Status, res.FailureReason, tc.want)
			}
			if diff := cmp.Diff(res.Completed, []string{"start", "work", "fix", "work", "fix"}); diff != "" {
				t.Errorf("completed (-got +want):\n%s", diff)
			}
		})
	}
}

const restartPipeline = `digraph t {
	loop_restart_persist_keys="keep"
	start [shape=Mdiamond]; done [shape=Msquare]
	seed [shape=parallelogram, tool_command="echo '{\"status\":\"success\",\"context_updates\":{\"keep\":\"yes\",\"drop\":\"yes\"}}' > $KILROY_STAGE_STATUS_PATH"]
	work [shape=parallelogram, tool_command=%q]
	start -> seed -> work
	work -> done [condition="outcome=success"]
	work -> seed [condition="outcome=fail", loop_restart=true]
}`

func TestLoopRestart(t *testing.T) {
	t.Run("transient failure restarts with a fresh context", func(t *testing.T) {
		h := newHarness(t)
		var sawDrop []string
		cmd := countingTool(`{"status":"fail","failure_reason":"runner lost","failure_class":"transient_infra"}`, `{"status":"success"}`)
		p := mustLoad(t, fmt.Sprintf(restartPipeline, cmd))
		res := h.run(p)
		if res.Status != StatusSuccess {
			t.Fatalf("run = %s %q, want success", res.Status, res.FailureReason)
		}
		for _, c := range h.host.checkpoints {
			if c.Node.ID == "work" {
				sawDrop = append(sawDrop, fmt.Sprintf("%v %v %v", c.State.Context["drop"], c.State.Visits["work"], c.State.Restarts))
			}
		}
		// After the restart the context lost "drop" until seed ran again;
		// the checkpoint right after the restarting node shows the reset.
		if diff := cmp.Diff(sawDrop, []string{"<nil> 0 1", "yes 1 1"}); diff != "" {
			t.Errorf("drop, work visits, restarts at work checkpoints (-got +want):\n%s", diff)
		}
		if res.Context["keep"] != "yes" {
			t.Errorf("keep = %v, want the persisted value", res.Context["keep"])
		}
		if diff := cmp.Diff(h.rec.edgeList()[2:4], []string{"work->seed condition", "seed->work weight"}); diff != "" {
			t.Errorf("edges (-got +want):\n%s", diff)
		}
	})
	t.Run("deterministic failure loops through restarts until the cycle breaker", func(t *testing.T) {
		h := newHarness(t)
		res := h.run(mustLoad(t, fmt.Sprintf(restartPipeline, "exit 1")))
		want := `node work failed 3 times with the same failure signature "tool_command exited with status <n>"`
		if res.Status != StatusFail || !strings.Contains(res.FailureReason, want) {
			t.Errorf("run = %s %q, want fail containing %q", res.Status, res.FailureReason, want)
		}
		if res.State.Restarts != 2 {
			t.Errorf("restarts = %d, want 2 (the third failure meets the limit)", res.State.Restarts)
		}
	})
	t.Run("success outcome selecting a restart edge restarts", func(t *testing.T) {
		h := newHarness(t)
		res := h.run(mustLoad(t, `digraph t {
			start [shape=Mdiamond]; done [shape=Msquare]
			seed [shape=parallelogram, tool_command="true"]
			work [shape=parallelogram, tool_command="true"]
			start -> seed -> work
			work -> done [condition="outcome!=success"]
			work -> done [condition="outcome=success"]
			work -> seed [condition="outcome=success && context.internal.loop_restart_count=0", loop_restart=true, weight=2]
		}`))
		if res.Status != StatusSuccess {
			t.Fatalf("run = %s %q, want success", res.Status, res.FailureReason)
		}
		if diff := cmp.Diff(res.Completed, []string{"start", "seed", "work", "seed", "work", "done"}); diff != "" {
			t.Errorf("completed (-got +want):\n%s", diff)
		}
		if got := res.Context["internal.loop_restart_count"]; got != 1 {
			t.Errorf("internal.loop_restart_count = %v, want 1", got)
		}
	})
	t.Run("max_restarts bounds a failure that changes every time", func(t *testing.T) {
		h := newHarness(t)
		cmd := `n=$(( $(cat count 2>/dev/null || echo 0) + 1 )); echo $n > count; words=(a alpha beta gamma delta); echo "${words[$n]} broke" >&2; exit 1`
		src := strings.Replace(fmt.Sprintf(restartPipeline, cmd), `loop_restart_persist_keys="keep"`, `loop_restart_persist_keys="keep"; max_restarts=2`, 1)
		res := h.run(mustLoad(t, src))
		want := "loop restarted 2 times, the max_restarts limit; last restart edge work -> seed after outcome fail: tool_command exited with status 1: gamma broke"
		if res.Status != StatusFail || !strings.Contains(res.FailureReason, want) || res.FailureClass != ClassBudgetExhausted {
			t.Errorf("run = %s %s %q, want budget_exhausted containing %q", res.Status, res.FailureClass, res.FailureReason, want)
		}
	})
}
