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
	case policy == "" && !allow:
		v.waitAllByDefault(n, fanIn)
		return
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

// waitAllByDefault notes (parallel_wait_all) a parallel node that says
// nothing of its join rules and whose failure nothing routes: a failing
// branch fails the run here, where engines that follow the Attractor
// spec's wait_all go on with partial_success, so a pipeline written for
// them may stop where it did not.
func (v *validator) waitAllByDefault(n, fanIn *Node) {
	if fanIn == nil || v.failRouted(fanIn) || v.failRouted(n) {
		return
	}
	v.r.node(RuleParallelWaitAll, n, n.Pos,
		fmt.Sprintf("a failing branch of parallel node %q fails the run (join_policy defaults to wait_all); "+
			"engines that follow the Attractor spec's wait_all go on with partial_success", n.ID),
		fmt.Sprintf(`write join_policy="wait_all" to say so, set allow_partial=true to go on when a branch fails, `+
			`or route the failure: %s -> FIX_STEP [condition="outcome=fail"]`, fanIn.ID))
}

// failRouted reports whether a failure of n has somewhere to go: a retry
// target (n's or the graph's), an edge whose condition can match fail, or
// an unconditional edge into a diamond.
func (v *validator) failRouted(n *Node) bool {
	if n.RetryTarget != "" || n.FallbackRetryTarget != "" || v.p.RetryTarget != "" || v.p.FallbackRetryTarget != "" {
		return true
	}
	if n.Kind == KindParallel {
		return false // its edges are its branches
	}
	for _, e := range v.p.Outgoing(n.ID) {
		if e.Condition != nil && e.Condition.CanMatch(StatusFail) || e.Condition == nil && v.p.isConditional(e.To) {
			return true
		}
	}
	return false
}
