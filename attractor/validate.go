package attractor

import (
	"fmt"
	"slices"

	"github.com/kilroy-bot/kilroy-bot/attractor/dot"
)

// Validate checks a typed pipeline against the graph rules (start and exit
// nodes, edges, reachability, node requirements, fail routing) and returns
// its diagnostics sorted by position. It works on any Pipeline, loaded or
// built by hand; rules that need the source text (syntax, attr_type,
// condition_syntax, stylesheet_syntax, duration_unrenderable) run in Load.
// Every rule is linear in nodes plus edges.
func Validate(p *Pipeline, opts ...LoadOption) Diagnostics {
	return validate(p, newLoadConfig(opts))
}

func validate(p *Pipeline, cfg loadConfig) Diagnostics {
	v := newValidator(p, cfg)
	v.terminals()
	v.edgeEnds()
	v.reachability()
	v.exitReachable()
	for _, n := range p.Nodes {
		v.node(n)
	}
	v.graphTargets()
	v.otherEngines()
	v.fidelity()
	v.failRouting()
	v.r.diags.Sort()
	return v.r.diags
}

// validator holds the indices every rule shares, built once.
type validator struct {
	p   *Pipeline
	cfg loadConfig
	r   reporter
	ids map[string]int // node ID → index in p.Nodes (first declaration)
	out [][]int        // node index → indices of edges (both ends declared)
	// comp labels nodes with their strongly connected component (sccs).
	comp []int
	// names are the node IDs, for suggestNode, which has made suggested
	// suggestions so far.
	names     []string
	suggested int
}

func newValidator(p *Pipeline, cfg loadConfig) *validator {
	v := &validator{p: p, cfg: cfg, ids: make(map[string]int, len(p.Nodes)), out: make([][]int, len(p.Nodes))}
	for i, n := range p.Nodes {
		if _, dup := v.ids[n.ID]; !dup {
			v.ids[n.ID] = i
		}
	}
	for i, e := range p.Edges {
		from, ok1 := v.ids[e.From]
		_, ok2 := v.ids[e.To]
		if ok1 && ok2 {
			v.out[from] = append(v.out[from], i)
		}
	}
	return v
}

func (v *validator) nodesOfKind(k Kind) []*Node {
	var out []*Node
	for _, n := range v.p.Nodes {
		if n.Kind == k {
			out = append(out, n)
		}
	}
	return out
}

// terminals checks start_node, terminal_node, start_no_incoming and
// exit_no_outgoing.
func (v *validator) terminals() {
	starts := v.nodesOfKind(KindStart)
	switch {
	case len(starts) == 0:
		v.noStart()
	case len(starts) > 1:
		for _, n := range starts[1:] {
			v.r.node(RuleStartNode, n, n.Pos, fmt.Sprintf("second start node %q: %q at %d:%d is already the start",
				n.ID, starts[0].ID, starts[0].Pos.Line, starts[0].Pos.Col),
				"keep one node with shape=Mdiamond; give this one another shape")
		}
	}
	if len(v.nodesOfKind(KindExit)) == 0 {
		v.noExit()
	}
	for _, e := range v.p.Edges {
		if n := v.lookup(e.To); n != nil && n.Kind == KindStart {
			v.r.edge(RuleStartNoIncoming, e, e.Pos, fmt.Sprintf("edge %s -> %s enters the start node", e.From, e.To),
				"point the edge at the first real step instead; a pipeline restarts through loop_restart=true")
		}
		if n := v.lookup(e.From); n != nil && n.Kind == KindExit {
			v.r.edge(RuleExitNoOutgoing, e, e.FromPos, fmt.Sprintf("edge %s -> %s leaves exit node %q", e.From, e.To, e.From),
				"remove the edge, or make the node a normal step and add a separate exit")
		}
	}
}

// noStart reports a missing start at the node that looks like one: the
// first declared node that no edge enters, or the graph when none does.
func (v *validator) noStart() {
	entered := make([]bool, len(v.p.Nodes))
	for _, e := range v.p.Edges {
		if i, ok := v.ids[e.To]; ok {
			entered[i] = true
		}
	}
	for i, n := range v.p.Nodes {
		if !entered[i] && v.ids[n.ID] == i {
			v.r.node(RuleStartNode, n, attrPos(n.Attrs, "shape", n.Pos),
				fmt.Sprintf("pipeline has no start node; %q has no incoming edge and shape=%s", n.ID, n.Shape),
				fmt.Sprintf("if %s is where the run begins, write %s [shape=Mdiamond]; else add start [shape=Mdiamond] and an edge start -> FIRST_STEP", n.ID, n.ID))
			return
		}
	}
	v.r.at(RuleStartNode, v.p.Pos, "pipeline has no start node",
		"add one: start [shape=Mdiamond] and an edge start -> FIRST_STEP")
}

// noExit reports a missing exit at the first node without outgoing
// edges, or the graph when every node has one.
func (v *validator) noExit() {
	for i, n := range v.p.Nodes {
		if len(v.out[i]) == 0 && v.ids[n.ID] == i {
			v.r.node(RuleTerminalNode, n, attrPos(n.Attrs, "shape", n.Pos),
				fmt.Sprintf("pipeline has no exit node; %q has no outgoing edge and shape=%s", n.ID, n.Shape),
				fmt.Sprintf("if the run ends at %s, write %s [shape=Msquare]; else add exit [shape=Msquare] and an edge LAST_STEP -> exit", n.ID, n.ID))
			return
		}
	}
	v.r.at(RuleTerminalNode, v.p.Pos, "pipeline has no exit node",
		"add one: exit [shape=Msquare] and an edge LAST_STEP -> exit")
}

// lookup finds a node through the validator's own index, which also works
// for hand-built pipelines that were never indexed.
func (v *validator) lookup(id string) *Node {
	if i, ok := v.ids[id]; ok {
		return v.p.Nodes[i]
	}
	return nil
}

// edgeEnds checks edge_target_exists for both ends of every edge. A
// chain names its middle nodes twice (target of one hop, source of the
// next); each written name is reported once.
func (v *validator) edgeEnds() {
	reported := map[dot.Pos]bool{}
	for _, e := range v.p.Edges {
		for _, end := range []struct {
			id  string
			pos dot.Pos
		}{{e.From, e.FromPos}, {e.To, e.Pos}} {
			if _, ok := v.ids[end.id]; ok || reported[end.pos] && end.pos.IsValid() {
				continue
			}
			reported[end.pos] = true
			msg := fmt.Sprintf("%q is not a declared node", end.id)
			fix := fmt.Sprintf("declare it: %s [shape=box, prompt=\"...\"]", end.id)
			if s := v.suggestNode(end.id); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
				fix = fmt.Sprintf("change %q to %q", end.id, s)
			}
			v.r.edge(RuleEdgeTargetExists, e, end.pos, msg, fix)
		}
	}
}

// maxNameSuggestions is how many unknown node names of one pipeline get a
// "did you mean": each costs a look at every node, and a generated graph
// can name thousands of unknown nodes, where one more suggestion helps
// nobody.
const maxNameSuggestions = 20

// suggestNode is suggest over the pipeline's node IDs, for the first
// maxNameSuggestions unknown names.
func (v *validator) suggestNode(id string) string {
	if v.suggested >= maxNameSuggestions {
		return ""
	}
	v.suggested++
	if v.names == nil {
		v.names = v.nodeIDs()
	}
	return suggest(id, v.names)
}

func (v *validator) nodeIDs() []string {
	out := make([]string, 0, len(v.p.Nodes))
	for _, n := range v.p.Nodes {
		out = append(out, n.ID)
	}
	return out
}

// reachability reports nodes no path from the start reaches (an error, as
// spec §7.2 says: such a node is a mistake, and it never runs). It needs
// exactly one start; start_node reports the rest.
func (v *validator) reachability() {
	starts := v.nodesOfKind(KindStart)
	if len(starts) != 1 {
		return
	}
	seen := v.reach(v.ids[starts[0].ID])
	for i, n := range v.p.Nodes {
		if !seen[i] && v.ids[n.ID] == i {
			v.r.node(RuleReachability, n, n.Pos, fmt.Sprintf("node %q is not reachable from start node %q", n.ID, starts[0].ID),
				fmt.Sprintf("add an edge into %s from a step before it, or delete the node", n.ID))
		}
	}
}

// reach marks the nodes reachable from node index s (breadth first).
func (v *validator) reach(s int) []bool {
	seen := make([]bool, len(v.p.Nodes))
	seen[s] = true
	queue := []int{s}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, ei := range v.out[u] {
			if w := v.ids[v.p.Edges[ei].To]; !seen[w] {
				seen[w] = true
				queue = append(queue, w)
			}
		}
	}
	return seen
}

// graphTargets checks the graph-level retry targets.
func (v *validator) graphTargets() {
	for _, t := range []struct{ key, id string }{{"retry_target", v.p.RetryTarget}, {"fallback_retry_target", v.p.FallbackRetryTarget}} {
		if t.id == "" {
			continue
		}
		if _, ok := v.ids[t.id]; !ok {
			v.r.at(RuleRetryTargetExists, attrPos(v.p.Attrs, t.key, v.p.Pos), v.missingTarget(t.key, t.id), v.targetFix(t.id))
		}
	}
}

func (v *validator) missingTarget(key, id string) string {
	return fmt.Sprintf("%s %q is not a declared node", key, id)
}

func (v *validator) targetFix(id string) string {
	if s := v.suggestNode(id); s != "" {
		return fmt.Sprintf("did you mean %q?", s)
	}
	return "name a node declared in this file"
}

// fidelity checks fidelity_valid on the graph, nodes and edges.
func (v *validator) fidelity() {
	check := func(a Attrs, key, val string, fallback dot.Pos) {
		if val != "" && !slices.Contains(fidelityModes(), val) {
			fix := "use one of full, truncate, compact, summary:low, summary:medium, summary:high"
			if s := suggest(val, fidelityModes()); s != "" {
				fix = fmt.Sprintf("did you mean %q?", s)
			}
			v.r.at(RuleFidelityValid, attrPos(a, key, fallback), fmt.Sprintf("unknown fidelity mode %q", val), fix)
		}
	}
	check(v.p.Attrs, "default_fidelity", v.p.DefaultFidelity, v.p.Pos)
	for _, n := range v.p.Nodes {
		check(n.Attrs, "fidelity", n.Fidelity, n.Pos)
	}
	for _, e := range v.p.Edges {
		check(e.Attrs, "fidelity", e.Fidelity, e.Pos)
	}
}
