package attractor

import "fmt"

// failRouting checks what happens to a failed outcome:
// fail_loop_failure_class_guard and fail_path_missing.
func (v *validator) failRouting() {
	var comp []int // strongly connected components, computed on demand
	for _, e := range v.p.Edges {
		from := v.lookup(e.From)
		if from == nil || v.lookup(e.To) == nil || !e.Condition.CanMatch(StatusFail) {
			continue
		}
		restart := e.LoopRestart && e.Condition != nil
		loop := from.Kind == KindConditional && e.Condition != nil
		if !restart && !loop || e.Condition.HasKey("context.failure_class") {
			continue
		}
		if !restart {
			if comp == nil {
				comp = v.components()
			}
			if comp[v.ids[e.From]] != comp[v.ids[e.To]] {
				continue // not a loop: the target cannot lead back here
			}
		}
		v.unguardedLoop(e, restart)
	}
	for _, n := range v.p.Nodes {
		v.failPath(n)
	}
}

func (v *validator) unguardedLoop(e *Edge, restart bool) {
	what := fmt.Sprintf("fail edge %s -> %s loops back", e.From, e.To)
	if restart {
		what = fmt.Sprintf("loop_restart edge %s -> %s restarts the run on failure", e.From, e.To)
	}
	v.r.edge(RuleFailLoopGuard, e, attrPos(e.Attrs, "condition", e.Pos),
		what+" without checking context.failure_class: a deterministic failure repeats until the visit limit",
		"add && context.failure_class=transient_infra to this condition, and route context.failure_class!=transient_infra failures to a step outside the loop")
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
