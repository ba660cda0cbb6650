package attractor

import (
	"fmt"
	"slices"
	"strings"
)

// Join policies: what a parallel node's branches make of it.
//
// Parallel branches never hide a failure. Under wait_all (the default) a
// branch that ends in FAIL fails the parallel node, with a reason naming
// every failed branch and the node it failed at. The engine then enters
// the fan-in, which merges nothing and passes the failure on, so the
// fan-in's edges route it like any FAIL (a condition edge, a diamond, the
// retry target chain), else the run fails.
//
// A failed branch is tolerated only where the pipeline asks for it:
// allow_partial=true (on the parallel node, else on its fan-in) makes
// wait_all partial_success while one branch succeeded, and first_success
// needs one branch. A tolerated failure is listed in the parallel node's
// outcome (Details[toleratedKey]); a run that ends while such a node's
// latest outcome is still a failure ends partial_success, not success
// (toleratedFailures), so no report calls it green.

const (
	joinWaitAll      = "wait_all"
	joinFirstSuccess = "first_success"

	// toleratedKey lists, in a parallel node's outcome details, the nodes
	// at which the branches it tolerated failed.
	toleratedKey = "tolerated_failures"
	// parallelKey names, in a fan-in's outcome details, the parallel node
	// whose failure it passed on.
	parallelKey = "parallel_node"
)

// joinRules is how a parallel node judges its branches.
type joinRules struct {
	policy       string
	allowPartial bool
}

func (r *run) joinPolicy(n *Node, fanIn string) string {
	if n.JoinPolicy != "" {
		return n.JoinPolicy
	}
	if f := r.p.Node(fanIn); f != nil && f.JoinPolicy != "" {
		return f.JoinPolicy
	}
	return joinWaitAll
}

// allowPartial reads allow_partial from the parallel node, else its fan-in,
// as join_policy is read.
func (r *run) allowPartial(n *Node, fanIn string) bool {
	if n.AllowPartial {
		return true
	}
	f := r.p.Node(fanIn)
	return f != nil && f.AllowPartial
}

// joinOutcome applies the join rules to the branches' results: it fails
// when no branch succeeded, and under wait_all without allow_partial when
// any branch failed; otherwise it succeeds (partial_success when it
// tolerated failures under wait_all) and lists the tolerated failures.
func joinOutcome(n *Node, jr joinRules, results []BranchResult) Outcome {
	var ok int
	var failed []BranchResult
	for _, br := range results {
		if isSuccess(br.Status) {
			ok++
		} else {
			failed = append(failed, br)
		}
	}
	switch {
	case len(results) == 0:
		return failOutcome(ClassStructural, fmt.Sprintf("parallel node %s has no branches", n.ID))
	case ok == 0:
		return branchFailure(n, "every branch failed", failed)
	case len(failed) == 0:
		return Outcome{Status: StatusSuccess, Notes: fmt.Sprintf("%d of %d branches succeeded", ok, len(results))}
	case jr.policy == joinWaitAll && !jr.allowPartial:
		return branchFailure(n, fmt.Sprintf("%d of %d branches failed (join_policy=wait_all)", len(failed), len(results)), failed)
	}
	o := Outcome{Status: StatusSuccess, Notes: fmt.Sprintf("%d of %d branches succeeded (join_policy=%s)", ok, len(results), jr.policy)}
	if jr.policy == joinWaitAll {
		o.Status = StatusPartialSuccess
		o.Notes = fmt.Sprintf("allow_partial=true: %d of %d branches failed: %s", len(failed), len(results), describeBranches(failed))
	}
	if nodes := toleratedNodes(results); len(nodes) > 0 {
		o.Details = map[string]any{toleratedKey: nodes}
	}
	return o
}

// toleratedNodes lists the nodes of the failed branches where they failed,
// and the failures no edge handled in any branch (one canceled on its way
// to a repair), each once.
func toleratedNodes(results []BranchResult) []string {
	var failed []BranchResult
	for _, br := range results {
		if !isSuccess(br.Status) {
			failed = append(failed, br)
		}
	}
	out := failedNodes(failed)
	for _, br := range results {
		for _, id := range br.Unhandled {
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	return out
}

// branchFailure is a parallel node's FAIL: the reason names every failed
// branch and the node it failed at; the class is the branches' when they
// agree (all timed out: transient_infra), else deterministic.
func branchFailure(n *Node, what string, failed []BranchResult) Outcome {
	class := failed[0].FailureClass
	for _, br := range failed[1:] {
		if br.FailureClass != class {
			class = ClassDeterministic
		}
	}
	if class == "" {
		class = ClassDeterministic
	}
	o := failOutcome(class, fmt.Sprintf("parallel node %s: %s: %s", n.ID, what, describeBranches(failed)))
	o.FailureSignature = "parallel " + n.ID + ": " + strings.Join(failedNodes(failed), ", ")
	return o
}

// describeBranches says, per failed branch, where and why it failed.
func describeBranches(failed []BranchResult) string {
	parts := make([]string, len(failed))
	for i, br := range failed {
		at := ""
		if br.LastNode != "" {
			at = " at node " + br.LastNode
		}
		parts[i] = fmt.Sprintf("branch %s failed%s: %s", br.Branch, at, firstNonBlank(br.FailureReason, "no reason given"))
	}
	return strings.Join(parts, "; ")
}

// failedNodes lists the nodes the failed branches failed at, canceled
// branches left out (they were stopped, not failed), each once.
func failedNodes(failed []BranchResult) []string {
	var out []string
	for _, br := range failed {
		if br.LastNode != "" && br.FailureClass != ClassCanceled && !slices.Contains(out, br.LastNode) {
			out = append(out, br.LastNode)
		}
	}
	return out
}

func firstNonBlank(s ...string) string {
	for _, x := range s {
		if strings.TrimSpace(x) != "" {
			return x
		}
	}
	return ""
}

func isSuccess(s Status) bool { return s == StatusSuccess || s == StatusPartialSuccess }

// passOnParallelFailure is the fan-in after its parallel node failed: it
// merges nothing and fails with the parallel node's reason, class and
// signature, so the fan-in's edges route the failure.
func passOnParallelFailure(s *Stage) (Outcome, bool) {
	prev := s.PredecessorOutcome
	if prev == nil || prev.Status != StatusFail || s.Pipeline == nil {
		return Outcome{}, false
	}
	if p := s.Pipeline.Node(s.Predecessor); p == nil || p.Kind != KindParallel {
		return Outcome{}, false
	}
	o := failOutcome(prev.FailureClass, prev.FailureReason)
	o.FailureSignature = prev.FailureSignature
	o.Notes = fmt.Sprintf("fan-in %s: parallel node %s failed; nothing merged", s.Node.ID, s.Predecessor)
	o.Details = map[string]any{parallelKey: s.Predecessor}
	return o, true
}

// passedOnFrom names the parallel node whose failure fan-in outcome o
// passed on, or "".
func passedOnFrom(n *Node, o Outcome) string {
	if n.Kind != KindFanIn || o.Status != StatusFail {
		return ""
	}
	id, _ := o.Details[parallelKey].(string)
	return id
}

// toleratedFailures lists the nodes whose failure a parallel node's join
// rules tolerated and whose latest outcome is still that failure, in
// completion order.
func (s *State) toleratedFailures(p *Pipeline) []string {
	var out []string
	for _, id := range uniq(s.Completed) {
		n := p.Node(id)
		if n == nil || n.Kind != KindParallel || !isSuccess(s.Outcomes[id].Status) {
			continue
		}
		for _, f := range stringList(s.Outcomes[id].Details[toleratedKey]) {
			if o, ok := s.Outcomes[f]; ok && o.Status == StatusFail && o.FailureClass != ClassCanceled && !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}

// stringList reads a list of strings that is typed (this run) or decoded
// JSON (a resumed run).
func stringList(v any) []string {
	switch l := v.(type) {
	case []string:
		return l
	case []any:
		out := make([]string, 0, len(l))
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
