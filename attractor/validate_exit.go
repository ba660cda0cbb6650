package attractor

import (
	"fmt"
	"slices"
	"strings"
)

// exitReachable checks exit_reachable: a run that enters a node from
// which no path leads to an exit can only stop failed or loop until a
// limit. It reports the dead ends (non-exit nodes without outgoing
// edges) and the closed loops (cycles no edge leaves); every other node
// that cannot reach an exit leads into one of those. Nodes no run can
// enter (reachability reports them) are left out.
func (v *validator) exitReachable() {
	exits := v.nodesOfKind(KindExit)
	if len(exits) == 0 {
		return // terminal_node says so
	}
	alive := v.reachesExit(exits)
	entered := v.runnable()
	comp := v.sccs()
	leaves := make([]bool, len(v.p.Nodes)) // components with an edge to another one
	size := make([]int, len(v.p.Nodes))
	for i := range v.p.Nodes {
		size[comp[i]]++
		for _, ei := range v.out[i] {
			if comp[v.ids[v.p.Edges[ei].To]] != comp[i] {
				leaves[comp[i]] = true
			}
		}
	}
	reported := make([]bool, len(v.p.Nodes))
	for i, n := range v.p.Nodes {
		if alive[i] || !entered[i] || v.ids[n.ID] != i || v.hasUndeclaredTarget(n.ID) {
			continue
		}
		c := comp[i]
		switch {
		case len(v.out[i]) == 0:
			v.r.node(RuleExitReachable, n, n.Pos,
				fmt.Sprintf("node %q has no outgoing edge and is not an exit: a run that gets there stops failed", n.ID),
				fmt.Sprintf("add an edge %s -> NEXT_STEP, or make it an exit: %s [shape=Msquare]", n.ID, n.ID))
		case !leaves[c] && !reported[c]:
			reported[c] = true
			v.r.node(RuleExitReachable, n, n.Pos,
				fmt.Sprintf("%s loop with no path to an exit: a run that enters it repeats until a visit limit or run_timeout", v.loopNames(comp, c, size[c])),
				fmt.Sprintf(`add an edge from the loop to an exit or a step that reaches one, e.g. %s -> exit [condition="outcome=success"]`, n.ID))
		}
	}
}

// runnable marks the nodes a run can enter: those reachable from the
// start, or every node when there is not exactly one start.
func (v *validator) runnable() []bool {
	if starts := v.nodesOfKind(KindStart); len(starts) == 1 {
		return v.reach(v.ids[starts[0].ID])
	}
	all := make([]bool, len(v.p.Nodes))
	for i := range all {
		all[i] = true
	}
	return all
}

// reachesExit marks the nodes from which some path leads to an exit.
func (v *validator) reachesExit(exits []*Node) []bool {
	// Reverse adjacency in two flat slices: the sources of the edges into
	// node w are from[start[w]:start[w+1]].
	start := make([]int, len(v.p.Nodes)+1)
	var to []int
	for i := range v.p.Nodes {
		for _, ei := range v.out[i] {
			w := v.ids[v.p.Edges[ei].To]
			to = append(to, w)
			start[w+1]++
		}
	}
	for w := range v.p.Nodes {
		start[w+1] += start[w]
	}
	from, next := make([]int, len(to)), slices.Clone(start)
	k := 0
	for i := range v.p.Nodes {
		for range v.out[i] {
			from[next[to[k]]] = i
			next[to[k]]++
			k++
		}
	}
	alive := make([]bool, len(v.p.Nodes))
	var queue []int
	for _, x := range exits {
		if i := v.ids[x.ID]; !alive[i] {
			alive[i] = true
			queue = append(queue, i)
		}
	}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, w := range from[start[u]:start[u+1]] {
			if !alive[w] {
				alive[w] = true
				queue = append(queue, w)
			}
		}
	}
	return alive
}

// loopNames names the nodes of component c, the first few of them.
func (v *validator) loopNames(comp []int, c, size int) string {
	var names []string
	for i, n := range v.p.Nodes {
		if comp[i] == c && v.ids[n.ID] == i && len(names) < 4 {
			names = append(names, n.ID)
		}
	}
	if size == 1 {
		return fmt.Sprintf("node %q is a", names[0])
	}
	list := strings.Join(names, ", ")
	if size > len(names) {
		list += fmt.Sprintf(" and %d more", size-len(names))
	}
	return fmt.Sprintf("nodes %s form a", list)
}

// hasUndeclaredTarget reports an edge from id to an undeclared node,
// which edge_target_exists reports instead.
func (v *validator) hasUndeclaredTarget(id string) bool {
	for _, e := range v.p.Outgoing(id) {
		if _, ok := v.ids[e.To]; !ok {
			return true
		}
	}
	return false
}
