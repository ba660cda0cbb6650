package attractor

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor/dot"
)

// Newer engines' dialects (Fabro, allouis/attractor, samueljklee/attractor,
// attractor-kotlin). A construct that means the same here is read as ours
// with a dialect_alias warning; one that means something else, or that
// kilroy-bot does not run, is a dialect_foreign error naming the
// construct, its engine and the rewrite. Nothing of theirs runs as
// something else: an unknown shape another engine defines is not an agent.

// foreignConstruct is another engine's shape or type.
type foreignConstruct struct {
	engine, what string
	rewrite      func(n *Node) string
}

// foreignShape returns the construct another engine defines for shape s,
// or nil.
func foreignShape(s string) *foreignConstruct {
	switch s {
	case "insulator":
		return &foreignConstruct{"Fabro", "timed wait (the node pauses for its duration)", waitRewrite}
	case "tab":
		return &foreignConstruct{"Fabro", "prompt node (one model call without tools)", promptRewrite}
	}
	return nil
}

// foreignType returns the construct another engine defines for type t,
// or nil.
func foreignType(t string) *foreignConstruct {
	switch t {
	case "wait":
		return &foreignConstruct{"Fabro", "timed wait", waitRewrite}
	case "prompt":
		return &foreignConstruct{"Fabro", "prompt node (one model call without tools)", promptRewrite}
	case "pull_request":
		return &foreignConstruct{"Fabro", "draft pull request step", func(*Node) string {
			return "remove the node: kilroy-bot reports on the pull request the run belongs to, and pushes the run branch itself"
		}}
	case "subgraph":
		return &foreignConstruct{"allouis/attractor", "static sub-pipeline (graph_ref, inlined at load time)", subgraphRewrite}
	}
	return nil
}

func waitRewrite(n *Node) string {
	d := cmpOr(n.Attrs.str("duration"), "30s")
	secs := "30"
	if dur, err := attrDuration(d); err == nil && dur > 0 {
		secs = strconv.FormatFloat(dur.Seconds(), 'f', -1, 64)
	}
	return fmt.Sprintf(`a tool step that waits: %s [shape=parallelogram, tool_command="sleep %s"]`, n.ID, secs)
}

func promptRewrite(n *Node) string {
	return fmt.Sprintf("write %s [shape=box]: a coding agent step, which may use tools; "+
		"say in its prompt that it must not change files if it only answers", n.ID)
}

func subgraphRewrite(n *Node) string {
	ref := cmpOr(n.Attrs.str("graph_ref"), "CHILD.dot")
	return fmt.Sprintf(`run the child pipeline with the manager loop: %s [shape=house, stack.child_dotfile=%q] `+
		"(it runs in the same run and worktree; pass values through the context instead of var.*)", n.ID, ref)
}

// otherEngines checks dialect_foreign on every node.
func (v *validator) otherEngines() {
	for _, n := range v.p.Nodes {
		v.foreignNode(n)
		v.houseAsHumanGate(n)
		v.hexagonAsManager(n)
		v.foreignAttrValues(n)
	}
}

func (v *validator) foreignNode(n *Node) {
	if n.Type != "" {
		if f := foreignType(n.Type); f != nil && !v.cfg.types[n.Type] {
			v.r.node(RuleDialectForeign, n, attrPos(n.Attrs, "type", n.Pos),
				fmt.Sprintf("node %q: type=%q is %s's %s, which kilroy-bot does not run", n.ID, n.Type, f.engine, f.what), f.rewrite(n))
		}
		return
	}
	if f := foreignShape(n.Shape); f != nil {
		v.r.node(RuleDialectForeign, n, attrPos(n.Attrs, "shape", n.Pos),
			fmt.Sprintf("node %q: shape=%s is %s's %s, which kilroy-bot does not run (nor runs as a coding agent)", n.ID, n.Shape, f.engine, f.what),
			f.rewrite(n))
	}
}

// houseAsHumanGate reports a house node written as samueljklee's human
// gate: samueljklee maps house to wait.human and hexagon to the manager,
// the reverse of spec §2.8, where house is the manager loop. A house with
// no child pipeline (stack.child_dotfile, on it or the graph) whose
// outgoing edges are labelled choices, or that sets a default choice, is
// a gate.
func (v *validator) houseAsHumanGate(n *Node) {
	if n.Kind != KindManagerLoop || n.Attrs.has("stack.child_dotfile") || v.p.Attrs.has("stack.child_dotfile") {
		return
	}
	if !n.Attrs.has("human.default_choice") && v.labelledEdges(n) < 2 {
		return
	}
	v.r.node(RuleDialectForeign, n, attrPos(n.Attrs, "shape", n.Pos),
		fmt.Sprintf("node %q: shape=house with labelled choices and no stack.child_dotfile is samueljklee's human gate; "+
			"here (spec §2.8) house is the manager loop, which runs a child pipeline, and hexagon is the human gate", n.ID),
		fmt.Sprintf("write %s [shape=hexagon]: its outgoing edges' labels are the choices", n.ID))
}

// hexagonAsManager reports a hexagon written as samueljklee's manager
// (the same swap, the other way round): a hexagon with a child pipeline
// or manager attributes would wait for a person here.
func (v *validator) hexagonAsManager(n *Node) {
	if n.Kind != KindWaitHuman {
		return
	}
	for _, k := range []string{"stack.child_dotfile", "manager.max_cycles", "manager.stop_condition", "manager.poll_interval", "manager.actions"} {
		if n.Attrs.has(k) && n.Attrs[k].Source != FromGraph {
			v.r.node(RuleDialectForeign, n, attrPos(n.Attrs, "shape", n.Pos),
				fmt.Sprintf("node %q: shape=hexagon with %s is samueljklee's manager; here (spec §2.8) hexagon is a human gate, which would wait for a person", n.ID, k),
				fmt.Sprintf("write %s [shape=house]: the manager loop", n.ID))
			return
		}
	}
}

func (v *validator) labelledEdges(n *Node) int {
	c := 0
	for _, ei := range v.out[v.ids[n.ID]] {
		if e := v.p.Edges[ei]; e.Label != "" && e.Condition == nil {
			c++
		}
	}
	return c
}

// foreignAttrValues reports attribute values whose meaning differs here:
// Fabro's language="python" script (tool_command runs in the shell) and
// selection="random" (edges are chosen deterministically here).
func (v *validator) foreignAttrValues(n *Node) {
	if lang := n.Attrs.str("language"); lang != "" && !strings.EqualFold(lang, "shell") {
		v.r.node(RuleDialectForeign, n, n.Attrs["language"].Value.Pos,
			fmt.Sprintf("node %q: language=%q is Fabro's: the script would run as a shell command here", n.ID, lang),
			fmt.Sprintf(`call the interpreter in the command: tool_command="%s script.py", with the script committed beside the pipeline`, strings.ToLower(lang)))
	}
	if sel := n.Attrs.str("selection"); sel != "" {
		v.r.node(RuleDialectForeign, n, n.Attrs["selection"].Value.Pos,
			fmt.Sprintf("node %q: selection=%q is Fabro's weighted random choice of the next edge; kilroy-bot chooses deterministically", n.ID, sel),
			"remove it: the highest weight wins, then the lexically first target; or have the step choose (a custom outcome and an edge naming it)")
	}
}

// scriptShape is the shape of a node that writes none: Fabro runs a node
// with script= and no shape or type as a command, so such a node is a
// tool step here too (with a warning); any other is an agent step.
func (b *builder) scriptShape(n *Node) string {
	a := n.Attrs
	if a.has("type") || b.written(a, "tool_command") != "script" {
		return "box"
	}
	b.r.node(RuleDialectAlias, n, a["tool_command"].Pos,
		fmt.Sprintf("node %q has script= and no shape: Fabro runs it as a command, and so does kilroy-bot (shape=parallelogram)", n.ID),
		fmt.Sprintf(`write %s [shape=parallelogram, tool_command="..."]`, n.ID))
	return "parallelogram"
}

// dialectValue warns about values written in another engine's way that
// mean the same here: a fractional weight.
func (b *builder) dialectValue(w attrWhere, a dot.Attr) {
	if a.Key != "weight" || w != onEdge {
		return
	}
	if _, err := strconv.Atoi(a.Value.Text); err == nil {
		return
	}
	if f, err := strconv.ParseFloat(a.Value.Text, 64); err == nil {
		b.r.at(RuleDialectAlias, a.Value.Pos,
			fmt.Sprintf("weight=%s is a fractional weight (samueljklee, Fabro): compared as the number %s; an edge without weight weighs 0 here (samueljklee: 1.0)",
				a.Value.Text, strconv.FormatFloat(f, 'g', -1, 64)),
			"write whole numbers, weight=2, so every engine orders the edges alike")
	}
}
