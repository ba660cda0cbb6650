package attractor

import (
	"fmt"
	"slices"
	"strings"
)

// node runs the per-node rules.
func (v *validator) node(n *Node) {
	v.shapeAndType(n)
	v.managerLoop(n)
	v.commands(n)
	v.retryTargets(n)
	v.prompts(n)
	v.parallelTolerance(n)
}

func (v *validator) shapeAndType(n *Node) {
	if n.Type == "" {
		// Shape is empty only on hand-built nodes, which set Kind directly.
		if _, ok := shapeKind(n.Shape); !ok && n.Shape != "" && foreignShape(n.Shape) == nil {
			v.unknownShape(n)
		}
		return
	}
	if v.knownType(n.Type) || foreignType(n.Type) != nil {
		return // dialect_foreign reports another engine's type
	}
	known := v.knownTypes()
	fix := "use a built-in type (" + joinList(known) + ") or register the handler"
	if s := suggest(n.Type, known); s != "" {
		fix = fmt.Sprintf("did you mean %q?", s)
	}
	v.r.node(RuleTypeKnown, n, attrPos(n.Attrs, "type", n.Pos), fmt.Sprintf("unknown node type %q", n.Type), fix)
}

// unknownShape reports a shape without a handler: a near-miss of ours
// that is no Graphviz shape is a typo (shape_known); Kilroy's loop
// sentinels are refused (handler_supported); anything else runs as an
// agent step (shape_agent).
func (v *validator) unknownShape(n *Node) {
	pos := attrPos(n.Attrs, "shape", n.Pos)
	s := suggest(n.Shape, knownShapes())
	for _, k := range knownShapes() {
		if strings.EqualFold(k, n.Shape) {
			s = k
		}
	}
	switch {
	case kilroyLoopShape(n.Shape):
		v.r.node(RuleHandlerSupported, n, pos,
			fmt.Sprintf("node %q: shape=%s is Kilroy's loop sentinel (loop.begin/loop.end), which kilroy-bot does not run", n.ID, n.Shape),
			"write the loop with edges: drop the sentinels, have the deciding step write an outcome (continue or complete), "+
				`route DECIDER -> FIRST_STEP [condition="outcome=continue"] and DECIDER -> NEXT [condition="outcome=complete"], `+
				"and bound it with max_node_visits=N on FIRST_STEP")
	case s != "" && !graphvizShape(n.Shape):
		v.r.node(RuleShapeKnown, n, pos, fmt.Sprintf("unknown shape %q; did you mean %q?", n.Shape, s), fmt.Sprintf("write shape=%s", s))
	default:
		fix := "use one of " + joinList(knownShapes()) + ", or set type="
		if s != "" {
			fix = fmt.Sprintf("did you mean %q? Otherwise write shape=box for an agent step", s)
		}
		v.r.node(RuleShapeAgent, n, pos, fmt.Sprintf("shape %q has no handler of its own: node %q runs as a coding agent (shape=box)", n.Shape, n.ID), fix)
	}
}

func (v *validator) knownType(t string) bool {
	return v.cfg.types[t] || slices.Contains(builtinKinds(), Kind(t))
}

func (v *validator) knownTypes() []string {
	var out []string
	for _, k := range builtinKinds() {
		out = append(out, string(k))
	}
	for t := range v.cfg.types {
		out = append(out, t)
	}
	slices.Sort(out[len(builtinKinds()):])
	return out
}

func joinList(ss []string) string { return strings.Join(ss, ", ") }

// commands checks tool_command_missing and verify_command_missing.
func (v *validator) commands(n *Node) {
	switch {
	case n.Kind == KindTool && n.ToolCommand == "":
		fix := fmt.Sprintf(`add tool_command="..." to %s`, n.ID)
		if n.Attrs.has("command") {
			fix = `rename command to tool_command: tool nodes run tool_command`
		}
		v.r.node(RuleToolCommandMissing, n, n.Pos, fmt.Sprintf("tool node %q has no tool_command", n.ID), fix)
	case n.Kind == KindVerify && n.Command == "":
		v.r.node(RuleVerifyCommandMissing, n, n.Pos, fmt.Sprintf("verify node %q has no command", n.ID),
			fmt.Sprintf(`add command="go test ./..." (or verify_command=) to %s`, n.ID))
	}
}

// retryTargets checks retry_target_exists and goal_gate_has_retry.
func (v *validator) retryTargets(n *Node) {
	for _, t := range []struct{ key, id string }{{"retry_target", n.RetryTarget}, {"fallback_retry_target", n.FallbackRetryTarget}} {
		if t.id == "" {
			continue
		}
		if _, ok := v.ids[t.id]; !ok {
			v.r.node(RuleRetryTargetExists, n, attrPos(n.Attrs, t.key, n.Pos), v.missingTarget(t.key, t.id), v.targetFix(t.id))
		}
	}
	if n.GoalGate && n.RetryTarget == "" && n.FallbackRetryTarget == "" &&
		v.p.RetryTarget == "" && v.p.FallbackRetryTarget == "" {
		v.r.node(RuleGoalGateHasRetry, n, attrPos(n.Attrs, "goal_gate", n.Pos),
			fmt.Sprintf("goal gate %q has no retry_target: an unmet gate fails the run", n.ID),
			fmt.Sprintf("add retry_target=%s (or the step that should fix it) to the node or the graph", n.ID))
	}
}

// prompts checks prompt_on_llm_nodes and prompt_on_conditional.
func (v *validator) prompts(n *Node) {
	if n.Type == "" && kilroyLoopShape(n.Shape) {
		return // handler_supported refuses the node
	}
	switch n.Kind {
	case KindCodergen:
		// A loaded node's prompt falls back to its label, which defaults
		// to the ID: only a node with neither written says nothing.
		if n.Prompt == "" || n.Attrs != nil && !n.Attrs.has("prompt") && !n.Attrs.has("label") {
			v.r.node(RulePromptOnLLMNodes, n, n.Pos, fmt.Sprintf("agent node %q has no prompt or label", n.ID),
				fmt.Sprintf(`add prompt="..." to %s saying what the agent should do`, n.ID))
		}
	case KindConditional:
		if n.Prompt != "" {
			v.r.node(RulePromptOnConditional, n, attrPos(n.Attrs, "prompt", n.Pos),
				fmt.Sprintf("conditional node %q ignores its prompt: it only routes", n.ID),
				"remove the prompt, or use shape=box for a step that asks an agent")
		}
	}
}
