package checks

import (
	"cmp"
	"math"
	"slices"
)

// markStarted gives a node that starts for the first time the next place
// in the run's order.
func (v *RunView) markStarted(n *NodeView) {
	if n.Started != 0 {
		return
	}
	last := 0
	for i := range v.Nodes {
		last = max(last, v.Nodes[i].Started)
	}
	n.Started = last + 1
}

// RunOrder returns the nodes as a reader follows the run: those that ran
// in the order they first started, then those that never ran, in
// declaration order (an exit the run never reached is last, not second).
func RunOrder(nodes []NodeView) []NodeView {
	out := slices.Clone(nodes)
	slices.SortStableFunc(out, func(a, b NodeView) int { return cmp.Compare(runPlace(a), runPlace(b)) })
	return out
}

// runPlace is where a node goes in RunOrder.
func runPlace(n NodeView) int {
	if n.Started == 0 {
		return math.MaxInt
	}
	return n.Started
}
