package attractor

import "fmt"

// parallelTolerance warns where a parallel node's join rules tolerate a
// failing branch (parallel_tolerates_failure): allow_partial, or
// first_success, on the parallel node or its fan-in. Such a run can end
// partial_success with a failed verify node, and its summary check is
// neutral, which GitHub counts as passing a required check.
func (v *validator) parallelTolerance(n *Node) {
	if n.Kind != KindParallel {
		return
	}
	fanIn := v.p.Node(findFanIn(v.p, n.ID))
	policy, allow := n.JoinPolicy, n.AllowPartial
	if fanIn != nil {
		policy, allow = cmpOr(policy, fanIn.JoinPolicy), allow || fanIn.AllowPartial
	}
	var asks, fix string
	switch {
	case allow:
		asks, fix = "allow_partial=true", "remove allow_partial to make a failing branch fail the run"
	case policy == joinFirstSuccess:
		asks, fix = `join_policy="first_success"`, `use join_policy="wait_all" to make a failing branch fail the run`
	default:
		return
	}
	v.r.node(RuleParallelTolerates, n, n.Pos,
		fmt.Sprintf("parallel node %q has %s: a failing branch does not fail the run; the run ends partial_success "+
			"and the kilroy/<pipeline> check neutral, which GitHub counts as passing a required check", n.ID, asks),
		fix+", or route the failure after the fan-in with a condition=\"outcome=fail\" edge")
}
