package attractor

import "fmt"

// failRouting checks what happens to a failed outcome:
// fail_loop_failure_class_guard and fail_path_missing.
func (v *validator) failRouting() {
	var comp []int // strongly connected components, computed on demand
	var bounded, failsInto map[int]bool
	for _, e := range v.p.Edges {
		from, to := v.lookup(e.From), v.lookup(e.To)
		if from == nil || to == nil || !e.Condition.CanMatch(StatusFail) || e.Condition.HasKey("context.failure_class") {
			continue
		}
		if e.LoopRestart && (e.Condition != nil || to.Kind == KindConditional) {
			v.unguardedRestart(e)
			continue
		}
		if from.Kind != KindConditional || e.Condition == nil {
			continue
		}
		if comp == nil {
			comp = v.sccs()
			bounded, failsInto = v.boundedComponents(comp), v.receiveFail()
		}
		if !failsInto[v.ids[e.From]] {
			continue // the engine never carries a failure along this edge
		}
		if c := comp[v.ids[e.From]]; c == comp[v.ids[e.To]] && !bounded[c] {
			v.unguardedLoop(e)
		}
	}
	for _, n := range v.p.Nodes {
		v.failPath(n)
	}
}

// receiveFail marks the nodes a failed outcome can enter: through an
// unconditional edge (a FAIL passes into a diamond) or a condition that
// can match fail, from any node but the start.
func (v *validator) receiveFail() map[int]bool {
	out := map[int]bool{}
	for _, e := range v.p.Edges {
		from, ok1 := v.ids[e.From]
		to, ok2 := v.ids[e.To]
		if ok1 && ok2 && v.p.Nodes[from].Kind != KindStart && e.Condition.CanMatch(StatusFail) {
			out[to] = true
		}
	}
	return out
}

// boundedComponents marks the components holding a node with a visit
// limit (or all of them under a graph max_node_visits): a loop through
// such a component ends at the limit.
func (v *validator) boundedComponents(comp []int) map[int]bool {
	out := map[int]bool{}
	for i, n := range v.p.Nodes {
		if n.MaxVisits > 0 || v.p.MaxNodeVisits > 0 {
			out[comp[i]] = true
		}
	}
	return out
}

func (v *validator) unguardedLoop(e *Edge) {
	v.r.edge(RuleFailLoopGuard, e, attrPos(e.Attrs, "condition", e.Pos),
		fmt.Sprintf("fail edge %s -> %s loops back without checking context.failure_class and no node of the loop has max_node_visits: "+
			"the same failure repeating stops the run at failure_signature_limit (%d), but a failure whose message changes every round loops until run_timeout",
			e.From, e.To, v.signatureLimit()),
		fmt.Sprintf("bound the loop with max_node_visits=N on %s, or add && context.failure_class=transient_infra to this condition and route other failures out of the loop", e.To))
}

// unguardedRestart is the Kilroy guard on loop restarts, as a warning:
// a restart is taken after any failure that selects it.
func (v *validator) unguardedRestart(e *Edge) {
	v.r.edge(RuleFailLoopGuard, e, attrPos(e.Attrs, "condition", e.Pos),
		fmt.Sprintf("loop_restart edge %s -> %s restarts the run after a deterministic failure too (Kilroy restarts only on transient_infra): "+
			"the same failure restarts until failure_signature_limit (%d), one that changes every time until max_restarts (%d)",
			e.From, e.To, v.signatureLimit(), settingsOf(v.p).maxRestarts),
		"add && context.failure_class=transient_infra to this condition if only infrastructure failures should restart, and route other failures out of the loop")
}

func (v *validator) signatureLimit() int {
	if v.p.FailureSignatureLimit > 0 {
		return v.p.FailureSignatureLimit
	}
	return 3
}

// failPath warns about a node whose outgoing edges are all conditional
// with none able to carry a failed outcome and no retry target to fall
// back on: a failure there ends the run with no say from the pipeline.
func (v *validator) failPath(n *Node) {
	if n.Kind == KindExit || n.Kind == KindStart || n.RetryTarget != "" || n.FallbackRetryTarget != "" ||
		v.p.RetryTarget != "" || v.p.FallbackRetryTarget != "" {
		return
	}
	outs := v.out[v.ids[n.ID]]
	if len(outs) == 0 {
		return
	}
	for _, ei := range outs {
		if e := v.p.Edges[ei]; e.Condition == nil || e.Condition.CanMatch(StatusFail) {
			return
		}
	}
	v.r.node(RuleFailPathMissing, n, n.Pos,
		fmt.Sprintf("no edge from %q matches a failed outcome: a failure there ends the run", n.ID),
		fmt.Sprintf(`add an edge like %s -> FIX_STEP [condition="outcome=fail"], or set retry_target`, n.ID))
}

// sccs returns the strongly connected components, computed once.
func (v *validator) sccs() []int {
	if v.comp == nil {
		v.comp = v.components()
	}
	return v.comp
}

// components labels each node with its strongly connected component
// (Tarjan's algorithm, iterative so that long chains cannot overflow the
// stack). An edge lies on a cycle exactly when both ends share a label.
func (v *validator) components() []int {
	n := len(v.p.Nodes)
	index, low, comp := make([]int, n), make([]int, n), make([]int, n)
	onStack := make([]bool, n)
	var stack []int
	type frame struct{ node, next int }
	var calls []frame
	counter, ncomp := 0, 0
	visit := func(u int) {
		counter++
		index[u], low[u] = counter, counter
		stack = append(stack, u)
		onStack[u] = true
		calls = append(calls, frame{u, 0})
	}
	for s := range n {
		if index[s] != 0 {
			continue
		}
		visit(s)
		for len(calls) > 0 {
			f := &calls[len(calls)-1]
			u := f.node
			if f.next < len(v.out[u]) {
				w := v.ids[v.p.Edges[v.out[u][f.next]].To]
				f.next++
				if index[w] == 0 {
					visit(w)
				} else if onStack[w] {
					low[u] = min(low[u], index[w])
				}
				continue
			}
			calls = calls[:len(calls)-1]
			if len(calls) > 0 {
				p := calls[len(calls)-1].node
				low[p] = min(low[p], low[u])
			}
			if low[u] != index[u] {
				continue
			}
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp[w] = ncomp
				if w == u {
					break
				}
			}
			ncomp++
		}
	}
	return comp
}
