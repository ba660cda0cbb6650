package attractor

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// failsUntil is a tool command that exits 1 on its first n runs and 0
// after, counting its runs in the file name in the workspace.
func failsUntil(name string, n int) string {
	return fmt.Sprintf(`c=$(( $(cat %[1]s 2>/dev/null || echo 0) + 1 )); echo $c > %[1]s; if [ $c -le %[2]d ]; then echo "test_%[1]s failed: want 1 got 2" >&2; exit 1; fi`, name, n)
}

// repairLoop is the spec's step -> diamond -> outcome=fail -> fix idiom:
// the step reaches the diamond through an unconditional edge.
const repairLoop = `digraph t {
	start [shape=Mdiamond]; done [shape=Msquare]
	test [shape=parallelogram, tool_command=%q]
	check [shape=diamond]
	fix [shape=parallelogram, tool_command="true"]
	start -> test -> check
	check -> done [condition="outcome=success"]
	check -> fix [condition="outcome=fail%s"]
	fix -> test
}`

func TestFailRoutesThroughDiamond(t *testing.T) {
	for _, tc := range []struct {
		name       string
		cmd        string
		cond       string // extra clause on the fail edge
		wantPath   []string
		wantStatus Status
		wantNode   string // FailedNode
		wantReason string
	}{
		{
			name:       "repair loop runs",
			cmd:        failsUntil("n", 1),
			wantPath:   []string{"start", "test", "check", "fix", "test", "check", "done"},
			wantStatus: StatusSuccess,
		},
		{
			name:       "last_stage after the diamond is the step",
			cmd:        failsUntil("n", 1),
			cond:       " && context.last_stage=test",
			wantPath:   []string{"start", "test", "check", "fix", "test", "check", "done"},
			wantStatus: StatusSuccess,
		},
		{
			name:       "deterministic repeating failure stops at the signature limit",
			cmd:        failsUntil("n", 100),
			wantPath:   []string{"start", "test", "check", "fix", "test", "check", "fix", "test"},
			wantStatus: StatusFail,
			wantNode:   "test",
			wantReason: "node test failed 3 times with the same failure signature",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			res := h.run(mustLoad(t, fmt.Sprintf(repairLoop, tc.cmd, tc.cond)))
			if diff := cmp.Diff(res.Completed, tc.wantPath); diff != "" {
				t.Errorf("path (-got +want):\n%s", diff)
			}
			if res.Status != tc.wantStatus || res.FailedNode != tc.wantNode || !strings.Contains(res.FailureReason, tc.wantReason) {
				t.Errorf("run = %s at %q: %q, want %s at %q containing %q", res.Status, res.FailedNode, res.FailureReason, tc.wantStatus, tc.wantNode, tc.wantReason)
			}
		})
	}
}

func TestFailIntoDiamondIsTransparent(t *testing.T) {
	h := newHarness(t)
	res := h.run(mustLoad(t, fmt.Sprintf(repairLoop, failsUntil("n", 1), "")))
	if res.Status != StatusSuccess {
		t.Fatalf("run = %s %q", res.Status, res.FailureReason)
	}
	var got []string
	for _, c := range h.host.checkpoints {
		got = append(got, fmt.Sprintf("%s: outcome=%v last_stage=%v", c.Node.ID, c.State.Context["outcome"], c.State.Context["last_stage"]))
	}
	want := []string{
		"start: outcome=success last_stage=start",
		"test: outcome=fail last_stage=test",
		"check: outcome=fail last_stage=test",
		"fix: outcome=success last_stage=fix",
		"test: outcome=success last_stage=test",
		"check: outcome=success last_stage=test",
		"done: outcome=success last_stage=done",
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("context at each checkpoint (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(h.rec.edgeList()[1:3], []string{"test->check weight", "check->fix condition"}); diff != "" {
		t.Errorf("edges (-got +want):\n%s", diff)
	}
}

func TestFailNeverEntersOtherNodesUnconditionally(t *testing.T) {
	for _, tc := range []struct {
		name, src  string
		wantPath   []string
		wantNode   string
		wantReason string
	}{
		{
			name: "build -> test -> exit stays red",
			src: `digraph t {
				start [shape=Mdiamond]; exit [shape=Msquare]
				build [shape=parallelogram, tool_command="true"]
				test [shape=octagon, command="echo FAIL >&2; exit 1"]
				start -> build -> test -> exit
			}`,
			wantPath:   []string{"start", "build", "test"},
			wantNode:   "test",
			wantReason: "node test failed: verify command exited with status 1",
		},
		{
			name: "a diamond without a fail edge ends the run at the step",
			src: `digraph t {
				start [shape=Mdiamond]; exit [shape=Msquare]
				test [shape=parallelogram, tool_command="exit 1"]
				check [shape=diamond]
				start -> test -> check
				check -> exit [condition="outcome=success"]
			}`,
			wantPath:   []string{"start", "test", "check"},
			wantNode:   "test",
			wantReason: "node test failed: tool_command exited with status 1 (conditional check has no edge for outcome=fail)",
		},
		{
			name: "a failing goal gate says so",
			src: `digraph t {
				start [shape=Mdiamond]; exit [shape=Msquare]
				test [shape=parallelogram, goal_gate=true, tool_command="exit 1"]
				start -> test -> exit
			}`,
			wantPath:   []string{"start", "test"},
			wantNode:   "test",
			wantReason: "goal gate test unsatisfied: node test failed: tool_command exited with status 1",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			res := h.run(loadAnyway(t, tc.src))
			if diff := cmp.Diff(res.Completed, tc.wantPath); diff != "" {
				t.Errorf("path (-got +want):\n%s", diff)
			}
			if res.Status != StatusFail || res.FailedNode != tc.wantNode || !strings.HasPrefix(res.FailureReason, tc.wantReason) {
				t.Errorf("run = %s at %q: %q, want fail at %q starting %q", res.Status, res.FailedNode, res.FailureReason, tc.wantNode, tc.wantReason)
			}
		})
	}
}
