package attractor

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// handBuilt is a pipeline assembled without Load, as the engine's tests
// do; Validate must work on it.
func handBuilt(nodes []*Node, edges ...*Edge) *Pipeline {
	return &Pipeline{Nodes: nodes, Edges: edges}
}

func cond(t *testing.T, src string) *Condition {
	t.Helper()
	c, err := ParseCondition(src)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ruleIDs(ds Diagnostics) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Rule+":"+d.Node+edgeName(d.Edge))
	}
	return out
}

func edgeName(e *EdgeRef) string {
	if e == nil {
		return ""
	}
	return e.From + "->" + e.To
}

func TestValidateHandBuilt(t *testing.T) {
	start := &Node{ID: "start", Kind: KindStart}
	exit := &Node{ID: "exit", Kind: KindExit}
	work := &Node{ID: "work", Kind: KindCodergen, Prompt: "do it"}
	tests := []struct {
		name string
		p    *Pipeline
		want []string
	}{
		{"clean", handBuilt([]*Node{start, work, exit},
			&Edge{From: "start", To: "work"}, &Edge{From: "work", To: "exit"}), nil},
		{"two starts", handBuilt([]*Node{start, {ID: "s2", Kind: KindStart}, exit},
			&Edge{From: "start", To: "exit"}, &Edge{From: "s2", To: "exit"}),
			[]string{"start_node:s2"}},
		{"no exit, edge into start", handBuilt([]*Node{start, work}, &Edge{From: "start", To: "work"}, &Edge{From: "work", To: "start"}),
			[]string{"terminal_node:", "start_no_incoming:work->start"}},
		{"tool and verify without commands", handBuilt([]*Node{start, {ID: "t", Kind: KindTool}, {ID: "v", Kind: KindVerify}, exit},
			&Edge{From: "start", To: "t"}, &Edge{From: "t", To: "v"}, &Edge{From: "v", To: "exit"}),
			[]string{"tool_command_missing:t", "verify_command_missing:v"}},
		{"codergen without prompt", handBuilt([]*Node{start, {ID: "w", Kind: KindCodergen}, exit},
			&Edge{From: "start", To: "w"}, &Edge{From: "w", To: "exit"}),
			[]string{"prompt_on_llm_nodes:w"}},
		{"goal gate with graph retry target", &Pipeline{RetryTarget: "work",
			Nodes: []*Node{start, {ID: "work", Kind: KindCodergen, Prompt: "x", GoalGate: true}, exit},
			Edges: []*Edge{{From: "start", To: "work"}, {From: "work", To: "exit"}}}, nil},
		{"unknown retry targets", &Pipeline{RetryTarget: "nowhere",
			Nodes: []*Node{start, {ID: "work", Kind: KindCodergen, Prompt: "x", RetryTarget: "wrok"}, exit},
			Edges: []*Edge{{From: "start", To: "work"}, {From: "work", To: "exit"}}},
			[]string{"retry_target_exists:work", "retry_target_exists:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(ruleIDs(Validate(tt.p)), tt.want, sortStrings()); diff != "" {
				t.Errorf("diagnostics (-got +want):\n%s", diff)
			}
		})
	}
}

// The fail-loop guard (seed task 6): a conditional's fail edge back into
// a loop needs a context.failure_class clause; so do loop_restart edges.
func TestValidateFailLoopGuard(t *testing.T) {
	nodes := func() []*Node {
		return []*Node{{ID: "start", Kind: KindStart}, {ID: "implement", Kind: KindCodergen, Prompt: "x"},
			{ID: "check", Kind: KindConditional}, {ID: "exit", Kind: KindExit}, {ID: "escalate", Kind: KindExit}}
	}
	base := func(extra ...*Edge) *Pipeline {
		return handBuilt(nodes(), append([]*Edge{{From: "start", To: "implement"}, {From: "implement", To: "check"},
			{From: "check", To: "exit", Condition: cond(t, "outcome=success")}}, extra...)...)
	}
	guard := "fail_loop_failure_class_guard:check->implement"
	only := func(ds Diagnostics) Diagnostics {
		var out Diagnostics
		for _, d := range ds {
			if d.Rule == RuleFailLoopGuard {
				out = append(out, d)
			}
		}
		return out
	}
	tests := []struct {
		name string
		p    *Pipeline
		want []string
	}{
		{"unguarded fail loop", base(&Edge{From: "check", To: "implement", Condition: cond(t, "outcome=fail")}), []string{guard}},
		{"unguarded != success loop", base(&Edge{From: "check", To: "implement", Condition: cond(t, "outcome!=success")}), []string{guard}},
		{"split on failure class", base(
			&Edge{From: "check", To: "implement", Condition: cond(t, "outcome=fail && context.failure_class=transient_infra")},
			&Edge{From: "check", To: "escalate", Condition: cond(t, "outcome=fail && context.failure_class!=transient_infra")}), nil},
		{"fail edge forward is no loop", base(&Edge{From: "check", To: "escalate", Condition: cond(t, "outcome=fail")}), nil},
		{"success edge back is no fail loop", base(
			&Edge{From: "check", To: "implement", Condition: cond(t, "outcome=partial_success")},
			&Edge{From: "check", To: "escalate", Condition: cond(t, "outcome=fail")}), nil},
		{"diamond entered only on success never sees a failure", handBuilt(nodes(),
			&Edge{From: "start", To: "implement"}, &Edge{From: "implement", To: "check", Condition: cond(t, "outcome=success")},
			&Edge{From: "implement", To: "escalate", Condition: cond(t, "outcome=fail")},
			&Edge{From: "check", To: "exit", Condition: cond(t, "outcome=success")},
			&Edge{From: "check", To: "implement", Condition: cond(t, "outcome=fail")}), nil},
		{"loop bounded by max_node_visits", func() *Pipeline {
			p := base(&Edge{From: "check", To: "implement", Condition: cond(t, "outcome=fail")})
			p.Nodes[1].MaxVisits = 5
			return p
		}(), nil},
		{"unguarded loop_restart", base(
			&Edge{From: "check", To: "escalate", Condition: cond(t, "outcome=fail")},
			&Edge{From: "implement", To: "exit", Condition: cond(t, "outcome=fail"), LoopRestart: true}),
			[]string{"fail_loop_failure_class_guard:implement->exit"}},
		{"guarded loop_restart", base(
			&Edge{From: "check", To: "escalate", Condition: cond(t, "outcome=fail")},
			&Edge{From: "implement", To: "exit", Condition: cond(t, "outcome=fail && context.failure_class=transient_infra"), LoopRestart: true}), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(ruleIDs(only(Validate(tt.p))), tt.want, sortStrings()); diff != "" {
				t.Errorf("diagnostics (-got +want):\n%s", diff)
			}
		})
	}
}

func TestValidateFailPath(t *testing.T) {
	mk := func(retry string, conds ...string) *Pipeline {
		p := handBuilt([]*Node{{ID: "start", Kind: KindStart}, {ID: "w", Kind: KindCodergen, Prompt: "x", RetryTarget: retry},
			{ID: "exit", Kind: KindExit}}, &Edge{From: "start", To: "w"})
		for _, c := range conds {
			p.Edges = append(p.Edges, &Edge{From: "w", To: "exit", Condition: cond(t, c)})
		}
		return p
	}
	tests := []struct {
		name string
		p    *Pipeline
		want []string
	}{
		{"success only", mk("", "outcome=success"), []string{"fail_path_missing:w"}},
		{"success and partial", mk("", "outcome=success", "outcome=partial_success"), []string{"fail_path_missing:w"}},
		{"fail edge", mk("", "outcome=success", "outcome=fail"), nil},
		{"context clause may match", mk("", "context.x=1"), nil},
		{"unconditional edge", mk("", ""), nil},
		{"retry target", mk("w", "outcome=success"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(ruleIDs(Validate(tt.p)), tt.want); diff != "" {
				t.Errorf("diagnostics (-got +want):\n%s", diff)
			}
		})
	}
}

func TestComponents(t *testing.T) {
	// a -> b -> c -> a is one loop; d hangs off it; e loops on itself.
	p := handBuilt([]*Node{{ID: "a"}, {ID: "b"}, {ID: "c"}, {ID: "d"}, {ID: "e"}},
		&Edge{From: "a", To: "b"}, &Edge{From: "b", To: "c"}, &Edge{From: "c", To: "a"},
		&Edge{From: "c", To: "d"}, &Edge{From: "e", To: "e"})
	comp := newValidator(p, newLoadConfig(nil)).components()
	same := func(x, y int) bool { return comp[x] == comp[y] }
	if !same(0, 1) || !same(1, 2) || same(2, 3) || same(3, 4) || same(0, 4) {
		t.Errorf("components = %v", comp)
	}
}

func TestOutgoingIncomingIndexed(t *testing.T) {
	p, _ := load(t, `digraph G { a; b; c; a -> b; a -> c; b -> c }`)
	hand := handBuilt(p.Nodes, p.Edges...)
	for _, id := range []string{"a", "b", "c", "zz"} {
		if diff := cmp.Diff(p.Outgoing(id), hand.Outgoing(id)); diff != "" {
			t.Errorf("Outgoing(%s) indexed vs scan (-got +want):\n%s", id, diff)
		}
		if diff := cmp.Diff(p.Incoming(id), hand.Incoming(id)); diff != "" {
			t.Errorf("Incoming(%s) indexed vs scan (-got +want):\n%s", id, diff)
		}
	}
	out := p.Outgoing("a")
	_ = append(out, &Edge{From: "x"})
	if len(p.Outgoing("a")) != 2 || p.Outgoing("a")[1].To != "c" {
		t.Error("appending to Outgoing's result changed the index")
	}
}
