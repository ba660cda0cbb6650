package attractor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// writeChild writes a child pipeline into the harness's workspace.
func (h *harness) writeChild(name, src string) {
	h.t.Helper()
	p := filepath.Join(h.workspace, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// setCtx is a tool command that sets context key k to v through the
// status file.
func setCtx(k, v string) string {
	return `printf '{"status":"success","context_updates":{"` + k + `":"` + v + `"}}' > "$KILROY_STAGE_STATUS_PATH"`
}

const childThreeSteps = `digraph child {
  start [shape=Mdiamond]
  one   [shape=parallelogram, tool_command="` + "echo one >> steps.txt" + `"]
  two   [shape=parallelogram, tool_command="echo two >> steps.txt"]
  check [shape=octagon, command="grep -q two steps.txt"]
  exit  [shape=Msquare]
  start -> one -> two -> check -> exit
}
`

func houseParent(attrs string) string {
	return `digraph parent {
  start [shape=Mdiamond]
  h     [shape=house, stack.child_dotfile="kids/child.dot"` + attrs + `]
  after [shape=parallelogram, tool_command="echo after >> steps.txt"]
  done  [shape=Msquare]
  start -> h -> after -> done
}
`
}

func TestManagerLoopRunsChildToExit(t *testing.T) {
	h := newHarness(t)
	h.writeChild("kids/child.dot", childThreeSteps)
	res := h.run(mustLoad(t, houseParent("")))
	if res.Status != StatusSuccess {
		t.Fatalf("status = %s (%s), want success", res.Status, res.FailureReason)
	}
	want := []string{"start", "h/start", "h/one", "h/two", "h/check", "h/exit", "h", "after", "done"}
	if diff := cmp.Diff(h.host.checkpointNodes(), want); diff != "" {
		t.Errorf("checkpoints (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(res.Completed, want); diff != "" {
		t.Errorf("completed (-got +want):\n%s", diff)
	}
	b, _ := os.ReadFile(filepath.Join(h.workspace, "steps.txt"))
	if got := string(b); got != "one\ntwo\nafter\n" {
		t.Errorf("steps.txt = %q", got)
	}
	if got := res.Context[childStatusKey]; got != childCompleted {
		t.Errorf("%s = %v, want %s", childStatusKey, got, childCompleted)
	}
	if got := res.Context[childOutcomeKey]; got != "success" {
		t.Errorf("%s = %v, want success", childOutcomeKey, got)
	}
	// Child checkpoints resume at the house; the house's own goes on.
	for _, c := range h.host.checkpoints {
		want := "h"
		switch c.Node.ID {
		case "start":
		case "h":
			want = "after"
		case "after":
			want = "done"
		case "done":
			want = ""
		}
		if c.State.NextNode != want {
			t.Errorf("checkpoint %s: NextNode %q, want %q", c.Node.ID, c.State.NextNode, want)
		}
	}
	if _, ok := res.Context["internal.manager.h.next"]; ok {
		t.Errorf("the house's resume note outlived it: %v", res.Context)
	}
	if _, err := os.Stat(filepath.Join(h.runDir, "h_check", "stdout.log")); err != nil {
		t.Errorf("child verify node has no stage directory of its own: %v", err)
	}
}

func TestManagerLoopChildContextReachesParent(t *testing.T) {
	h := newHarness(t)
	h.writeChild("kids/child.dot", `digraph child {
  start [shape=Mdiamond]
  mark  [shape=parallelogram, tool_command="`+strings.ReplaceAll(setCtx("review", "approved"), `"`, `\"`)+`"]
  exit  [shape=Msquare]
  start -> mark -> exit
}
`)
	p := mustLoad(t, `digraph parent {
  start [shape=Mdiamond]
  h     [shape=house, stack.child_dotfile="kids/child.dot"]
  ok    [shape=parallelogram, tool_command="echo ok > ok.txt"]
  no    [shape=parallelogram, tool_command="exit 3"]
  done  [shape=Msquare]
  start -> h
  h -> ok [condition="context.review=approved"]
  h -> no
  ok -> done
  no -> done
}
`)
	res := h.run(p)
	if res.Status != StatusSuccess {
		t.Fatalf("status = %s (%s), want success", res.Status, res.FailureReason)
	}
	if got := res.Context["review"]; got != "approved" {
		t.Errorf("context review = %v, want approved", got)
	}
	if !containsNode(res.Completed, "ok") {
		t.Errorf("the parent did not route on the child's context: completed %v", res.Completed)
	}
}

func containsNode(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func TestManagerLoopStopCondition(t *testing.T) {
	h := newHarness(t)
	h.writeChild("kids/child.dot", `digraph child {
  start [shape=Mdiamond]
  one   [shape=parallelogram, tool_command="`+strings.ReplaceAll(setCtx("enough", "yes"), `"`, `\"`)+`"]
  two   [shape=parallelogram, tool_command="echo two >> steps.txt"]
  exit  [shape=Msquare]
  start -> one -> two -> exit
}
`)
	res := h.run(mustLoad(t, houseParent(`, manager.stop_condition="context.enough=yes"`)))
	if res.Status != StatusSuccess {
		t.Fatalf("status = %s (%s), want success", res.Status, res.FailureReason)
	}
	want := []string{"start", "h/start", "h/one", "h", "after", "done"}
	if diff := cmp.Diff(res.Completed, want); diff != "" {
		t.Errorf("completed (-got +want):\n%s", diff)
	}
	if got := res.Context[childStatusKey]; got != childStopped {
		t.Errorf("%s = %v, want %s", childStatusKey, got, childStopped)
	}
	if res.Outcomes["h"].Status != StatusSuccess {
		t.Errorf("house outcome = %+v, want success", res.Outcomes["h"])
	}
}

func TestManagerLoopMaxCycles(t *testing.T) {
	h := newHarness(t)
	h.writeChild("kids/child.dot", childThreeSteps)
	res := h.run(mustLoad(t, houseParent(`, manager.max_cycles=2`)))
	if res.Status != StatusFail {
		t.Fatalf("status = %s, want fail", res.Status)
	}
	o := res.Outcomes["h"]
	if o.Status != StatusFail || o.FailureClass != ClassBudgetExhausted || !strings.Contains(o.FailureReason, "manager.max_cycles") {
		t.Errorf("house outcome = %+v, want a budget_exhausted failure naming manager.max_cycles", o)
	}
	if res.FailedNode != "h" {
		t.Errorf("failed node = %q, want h", res.FailedNode)
	}
	if diff := cmp.Diff(res.Completed, []string{"start", "h/start", "h/one", "h"}); diff != "" {
		t.Errorf("completed (-got +want):\n%s", diff)
	}
}

func TestManagerLoopFailingChildFailsHouse(t *testing.T) {
	h := newHarness(t)
	h.writeChild("kids/child.dot", `digraph child {
  start [shape=Mdiamond]
  test  [shape=octagon, command="echo broken; exit 1"]
  exit  [shape=Msquare]
  start -> test -> exit
}
`)
	res := h.run(mustLoad(t, houseParent("")))
	if res.Status != StatusFail {
		t.Fatalf("status = %s, want fail", res.Status)
	}
	o := res.Outcomes["h"]
	if o.Status != StatusFail || !strings.Contains(o.FailureReason, "h/test") {
		t.Errorf("house outcome = %+v, want a failure naming h/test", o)
	}
	if res.Outcomes["h/test"].Status != StatusFail {
		t.Errorf("child test outcome = %+v", res.Outcomes["h/test"])
	}
	if containsNode(res.Completed, "after") {
		t.Errorf("the run went on after a failed child: %v", res.Completed)
	}
	if got := res.Context[childStatusKey]; got != childFailed {
		t.Errorf("%s = %v, want %s", childStatusKey, got, childFailed)
	}
}

// A failed child's house routes like any failed node; what the child
// wrote to the context before it failed is rolled back, so a condition on
// it cannot route the failure as if the child had done its work.
func TestManagerLoopFailureRoutes(t *testing.T) {
	h := newHarness(t)
	h.writeChild("kids/child.dot", `digraph child {
  start [shape=Mdiamond]
  mark  [shape=parallelogram, tool_command="`+strings.ReplaceAll(setCtx("review", "approved"), `"`, `\"`)+`"]
  test  [shape=octagon, command="exit 1"]
  exit  [shape=Msquare]
  start -> mark -> test -> exit
}
`)
	res := h.run(mustLoad(t, `digraph parent {
  start [shape=Mdiamond]
  h     [shape=house, stack.child_dotfile="kids/child.dot"]
  ship  [shape=parallelogram, tool_command="true"]
  fixup [shape=parallelogram, tool_command="true"]
  done  [shape=Msquare]
  start -> h -> done
  h -> ship [condition="context.review=approved"]
  h -> fixup [condition="outcome=fail"]
  ship -> done
  fixup -> done
}
`))
	if res.Status != StatusSuccess || !containsNode(res.Completed, "fixup") || containsNode(res.Completed, "ship") {
		t.Fatalf("status %s, completed %v: want the failure routed to fixup, not to ship", res.Status, res.Completed)
	}
	if got, ok := res.Context["review"]; ok {
		t.Errorf("context review = %v: a failed child's context reached the parent", got)
	}
	if got := res.Context[childStatusKey]; got != childFailed {
		t.Errorf("%s = %v, want %s", childStatusKey, got, childFailed)
	}
	if got := res.Context[childOutcomeKey]; got != "fail" {
		t.Errorf("%s = %v, want fail", childOutcomeKey, got)
	}
}

func TestManagerLoopResumesInsideChild(t *testing.T) {
	h := newHarness(t)
	h.writeChild("kids/child.dot", childThreeSteps)
	p := mustLoad(t, houseParent(""))
	ctx, cancel := context.WithCancel(context.Background())
	lis := &cancelAfter{recorder: h.rec, node: "h/one", cancel: cancel}
	cfg := h.cfg
	cfg.Listener = lis
	res, err := Run(ctx, p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusFail || res.FailureClass != ClassCanceled {
		t.Fatalf("first run: %s %s (%s), want canceled", res.Status, res.FailureClass, res.FailureReason)
	}
	last := h.host.checkpoints[len(h.host.checkpoints)-1]
	if last.Node.ID != "h/one" || last.State.NextNode != "h" {
		t.Fatalf("last checkpoint %s next %s, want h/one next h", last.Node.ID, last.State.NextNode)
	}
	if got := last.State.Context["internal.manager.h.next"]; got != "h/two" {
		t.Fatalf("resume note = %v, want h/two", got)
	}
	h.host.checkpoints = nil
	res, err = Resume(context.Background(), p, h.cfg, last.State)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusSuccess {
		t.Fatalf("resumed run: %s (%s)", res.Status, res.FailureReason)
	}
	want := []string{"h/two", "h/check", "h/exit", "h", "after", "done"}
	if diff := cmp.Diff(h.host.checkpointNodes(), want); diff != "" {
		t.Errorf("resumed checkpoints (-got +want):\n%s", diff)
	}
	b, _ := os.ReadFile(filepath.Join(h.workspace, "steps.txt"))
	if got := string(b); got != "one\ntwo\nafter\n" {
		t.Errorf("steps.txt = %q: the child's first step ran again, or a later one did not", got)
	}
}

// cancelAfter cancels the run once node's checkpoint is announced.
type cancelAfter struct {
	*recorder
	node   string
	cancel context.CancelFunc
}

func (c *cancelAfter) Checkpointed(ctx context.Context, ev Checkpointed) error {
	if ev.Node == c.node {
		c.cancel()
	}
	return c.recorder.Checkpointed(ctx, ev)
}

func TestManagerLoopRefusesBadChild(t *testing.T) {
	tests := []struct {
		name, attrs, file, src, want string
	}{
		{"missing file", `stack.child_dotfile="kids/none.dot"`, "", "", "kids/none.dot"},
		{"escapes", `stack.child_dotfile="../outside.dot"`, "", "", "leads out of the repository"},
		{"invalid child", `stack.child_dotfile="kids/bad.dot"`, "kids/bad.dot", "digraph c { a -> b }", "does not validate"},
		{"no attribute", ``, "", "", "stack.child_dotfile is not set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			if tt.file != "" {
				h.writeChild(tt.file, tt.src)
			}
			p := loadAnyway(t, "digraph p {\n start [shape=Mdiamond]\n h [shape=house, "+tt.attrs+"]\n done [shape=Msquare]\n start -> h -> done\n}\n")
			res := h.run(p)
			o := res.Outcomes["h"]
			if res.Status != StatusFail || o.FailureClass != ClassStructural || !strings.Contains(o.FailureReason, tt.want) {
				t.Errorf("run %s, house %+v: want a structural failure saying %q", res.Status, o, tt.want)
			}
		})
	}
}

func TestManagerLoopSymlinkOut(t *testing.T) {
	h := newHarness(t)
	outside := filepath.Join(t.TempDir(), "child.dot")
	if err := os.WriteFile(outside, []byte(childThreeSteps), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(h.workspace, "kids"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(h.workspace, "kids", "child.dot")); err != nil {
		t.Fatal(err)
	}
	res := h.run(mustLoad(t, houseParent("")))
	if res.Status != StatusFail || containsNode(res.Completed, "h/one") {
		t.Errorf("run %s, completed %v: a child linked from outside the worktree must not run", res.Status, res.Completed)
	}
}

func TestManagerLoopNestingBound(t *testing.T) {
	h := newHarness(t)
	h.writeChild("kids/child.dot", `digraph child {
  start [shape=Mdiamond]
  again [shape=house, stack.child_dotfile="kids/child.dot"]
  exit  [shape=Msquare]
  start -> again -> exit
}
`)
	res := h.run(loadAnyway(t, houseParent("")))
	if res.Status != StatusFail {
		t.Fatalf("status = %s, want fail", res.Status)
	}
	if !strings.Contains(res.FailureReason, "nest 5 deep") {
		t.Errorf("reason %q, want the nesting limit", res.FailureReason)
	}
	if !containsNode(res.Completed, "h/again/again/again/start") {
		t.Errorf("completed %v: want the nested children to run down to the bound", res.Completed)
	}
}

// A house in a parallel branch runs its child there; the child's
// checkpoints resume at the parallel node, as the branch's own do.
func TestManagerLoopInParallelBranch(t *testing.T) {
	h := newHarness(t)
	h.writeChild("kids/child.dot", childThreeSteps)
	res := h.run(mustLoad(t, `digraph parent {
  start [shape=Mdiamond]
  fan   [shape=component]
  h     [shape=house, stack.child_dotfile="kids/child.dot"]
  other [shape=parallelogram, tool_command="true"]
  join  [shape=tripleoctagon]
  done  [shape=Msquare]
  start -> fan
  fan -> h -> join
  fan -> other -> join
  join -> done
}
`))
	if res.Status != StatusSuccess {
		t.Fatalf("status = %s (%s), want success", res.Status, res.FailureReason)
	}
	for _, c := range h.host.checkpoints {
		if strings.HasPrefix(c.Node.ID, "h/") && c.State.NextNode != "fan" {
			t.Errorf("checkpoint %s: NextNode %q, want fan", c.Node.ID, c.State.NextNode)
		}
	}
	if !containsNode(res.Completed, "h/check") || res.Outcomes["h"].Status != StatusSuccess {
		t.Errorf("completed %v, house %+v: want the child run in the branch", res.Completed, res.Outcomes["h"])
	}
}

// The child's goal gates are checked at the child's exit: an unmet one
// fails the house. A stop condition from an earlier run of the child
// does not hold for the next one: stack.child.status is running again.
func TestManagerLoopChildGoalGateAndRevisit(t *testing.T) {
	t.Run("goal gate", func(t *testing.T) {
		h := newHarness(t)
		h.writeChild("kids/child.dot", `digraph child {
  start [shape=Mdiamond]
  test  [shape=octagon, command="exit 1", goal_gate=true]
  exit  [shape=Msquare]
  start -> test
  test -> exit [condition="outcome=fail"]
  test -> exit [condition="outcome=success"]
}
`)
		res := h.run(loadAnyway(t, houseParent("")))
		o := res.Outcomes["h"]
		if res.Status != StatusFail || !strings.Contains(o.FailureReason, "goal gate h/test unsatisfied") {
			t.Errorf("run %s, house %+v: want the child's unmet goal gate to fail the house", res.Status, o)
		}
	})
	t.Run("revisit", func(t *testing.T) {
		h := newHarness(t)
		h.writeChild("kids/child.dot", childThreeSteps)
		p := mustLoad(t, `digraph parent {
  start [shape=Mdiamond]
  h     [shape=house, stack.child_dotfile="kids/child.dot", manager.stop_condition="context.stack.child.status=completed"]
  again [shape=parallelogram, tool_command="`+strings.ReplaceAll(setCtx("looped", "yes"), `"`, `\"`)+`", max_node_visits=1]
  done  [shape=Msquare]
  start -> h
  h -> again [condition="context.stack.child.status=completed"]
  again -> h
  h -> done [condition="context.looped=yes", weight=2]
  h -> done [condition="outcome=fail"]
}
`)
		res := h.run(p)
		var runs int
		for _, id := range res.Completed {
			if id == "h/exit" {
				runs++
			}
		}
		if res.Status != StatusSuccess || runs != 2 {
			t.Errorf("run %s (%s), child exits %d, completed %v: want the second visit's child to run to its exit too",
				res.Status, res.FailureReason, runs, res.Completed)
		}
	})
}

// A run stopped inside a house nested in a child resumes in the inner
// child: the outer child continues at the inner house, which continues
// its own child where it was.
func TestManagerLoopResumesInsideNestedChild(t *testing.T) {
	h := newHarness(t)
	h.writeChild("kids/child.dot", `digraph child {
  start [shape=Mdiamond]
  pre   [shape=parallelogram, tool_command="echo pre >> steps.txt"]
  inner [shape=house, stack.child_dotfile="kids/inner.dot"]
  exit  [shape=Msquare]
  start -> pre -> inner -> exit
}
`)
	h.writeChild("kids/inner.dot", childThreeSteps)
	p := mustLoad(t, houseParent(""))
	ctx, cancel := context.WithCancel(context.Background())
	cfg := h.cfg
	cfg.Listener = &cancelAfter{recorder: h.rec, node: "h/inner/one", cancel: cancel}
	res, err := Run(ctx, p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.FailureClass != ClassCanceled {
		t.Fatalf("first run: %s %s (%s), want canceled", res.Status, res.FailureClass, res.FailureReason)
	}
	last := h.host.checkpoints[len(h.host.checkpoints)-1]
	notes := map[string]any{"h": last.State.Context["internal.manager.h.next"], "h/inner": last.State.Context["internal.manager.h/inner.next"]}
	if last.Node.ID != "h/inner/one" || last.State.NextNode != "h" || notes["h"] != "h/inner" || notes["h/inner"] != "h/inner/two" {
		t.Fatalf("last checkpoint %s next %s notes %v; want h/inner/one, next h, notes h/inner and h/inner/two", last.Node.ID, last.State.NextNode, notes)
	}
	h.host.checkpoints = nil
	res, err = Resume(context.Background(), p, h.cfg, last.State)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusSuccess {
		t.Fatalf("resumed run: %s (%s)", res.Status, res.FailureReason)
	}
	want := []string{"h/inner/two", "h/inner/check", "h/inner/exit", "h/inner", "h/exit", "h", "after", "done"}
	if diff := cmp.Diff(h.host.checkpointNodes(), want); diff != "" {
		t.Errorf("resumed checkpoints (-got +want):\n%s", diff)
	}
	b, _ := os.ReadFile(filepath.Join(h.workspace, "steps.txt"))
	if got := string(b); got != "pre\none\ntwo\nafter\n" {
		t.Errorf("steps.txt = %q", got)
	}
}
