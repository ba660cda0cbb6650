package attractor

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
)

// Parallel fan-out runs in the engine: a parallel (component) node starts
// one branch per outgoing edge; each branch walks the graph with a deep
// copy of the context until it reaches the fan-in (tripleoctagon) node.
//
// When the host is a BranchHost, branches run at once (at most
// max_parallel), each in a workspace of its own on its own goroutine; see
// branch_fanout.go. Otherwise they run one after another on the run's
// goroutine, sharing the run's workspace. Either way branch nodes are
// checkpointed like any node, with the parallel node as the resume point:
// a resumed run re-runs all branches.
//
// Inside a branch a FAIL follows a matching condition edge or ends the
// branch; retry targets and loop restarts are not taken there.

// BranchResult is what one branch produced; the parallel node stores the
// list under the context key parallel.results for the fan-in.
type BranchResult struct {
	Branch         string         `json:"branch"` // first node of the branch
	Status         Status         `json:"status"`
	FailureReason  string         `json:"failure_reason,omitempty"`
	FailureClass   FailureClass   `json:"failure_class,omitempty"`
	LastNode       string         `json:"last_node,omitempty"`
	ContextUpdates map[string]any `json:"context_updates,omitempty"`
	// Unhandled lists the branch's nodes whose failure no edge handled.
	Unhandled []string `json:"unhandled,omitempty"`
	// Ref is what the fan-in merges (a BranchHost's branch); "" when the
	// branch ran in the run's own workspace.
	Ref string `json:"ref,omitempty"`
}

// fanOut is the parallel node's handler.
func (r *run) fanOut(ctx context.Context, s *Stage) (Outcome, error) {
	n := s.Node
	fanIn := findFanIn(r.p, n.ID)
	if fanIn == "" {
		return failOutcome(ClassStructural, fmt.Sprintf(
			"parallel node %s has no fan-in node (shape=tripleoctagon) downstream where its branches join", n.ID)), nil
	}
	policy := r.joinPolicy(n, fanIn)
	var results []BranchResult
	var err error
	if bh, ok := r.cfg.Host.(BranchHost); ok {
		results, err = r.fanOutConcurrent(ctx, s, bh, fanIn, policy)
	} else {
		results, err = r.fanOutSequential(ctx, s, fanIn, policy)
	}
	if err != nil {
		return Outcome{}, err
	}
	o := joinOutcome(n, joinRules{policy: policy, allowPartial: r.allowPartial(n, fanIn)}, results)
	return o.withContextUpdate("parallel.results", results), nil
}

// fanOutSequential runs the branches one after another in the run's
// workspace; first_success stops at the first branch that succeeds.
func (r *run) fanOutSequential(ctx context.Context, s *Stage, fanIn, policy string) ([]BranchResult, error) {
	var results []BranchResult
	for _, e := range r.p.Outgoing(s.Node.ID) {
		ln := &lane{rc: s.Context.Clone(), prev: s.Node.ID, branch: e.To}
		br, err := r.walkBranch(ctx, ln, s.Node, e.To, fanIn)
		if err != nil {
			return nil, err
		}
		results = append(results, br)
		if policy == joinFirstSuccess && isSuccess(br.Status) {
			break
		}
	}
	return results, nil
}

// walkBranch runs one branch on lane ln from head until the fan-in node.
// It notes the failures no edge has handled yet in the result's
// Unhandled, however the branch ends (a first_success fan-out may cancel
// it on the way to its repair): an edge handles a failure once the node it
// leads to has run, or when it leads to the fan-in; an edge into a diamond
// only hands the failure on.
func (r *run) walkBranch(ctx context.Context, ln *lane, parallel *Node, head, fanIn string) (res BranchResult, err error) {
	br := BranchResult{Branch: head, ContextUpdates: map[string]any{}}
	var pending []string
	routed := false // the edge taken last carried a failure to a repair
	defer func() { res.Unhandled = pending }()
	for cur := head; ; {
		if err := ctx.Err(); err != nil {
			return br.failed(ClassCanceled, fmt.Sprintf("branch %s canceled before node %s: %v", head, cur, err)), nil
		}
		n := r.p.Node(cur)
		if reason := branchObstacle(n, cur); reason != "" {
			return br.failed(ClassStructural, reason), nil
		}
		o, end, err := r.executeNode(ctx, ln, n)
		if err != nil {
			return br, err
		}
		if err := r.branchCheckpoint(ctx, parallel, n, o, end); err != nil {
			if ctx.Err() == nil {
				return br, err
			}
			return cutCheckpoint(br, ln, n, o, head, err), nil
		}
		if o.Status == StatusFail && r.st.Signatures[signatureKey(n.ID, o)] >= r.signatureLimit() {
			return br, r.cycleStop(n, o)
		}
		br.LastNode, br.Status, br.FailureReason, br.FailureClass = failedStep(ln, n), o.Status, o.FailureReason, o.FailureClass
		if routed && o.FailureClass != ClassCanceled {
			pending = nil
		}
		routed = false
		if o.Status == StatusFail && o.FailureClass != ClassCanceled && n.Kind != KindConditional {
			pending = append(pending, n.ID)
		}
		for k, v := range o.ContextUpdates {
			br.ContextUpdates[k] = v
		}
		sel, ok := selectEdge(r.p.Outgoing(n.ID), o, r.condVars(ln, o), r.p.isConditional)
		switch {
		case !ok && o.Status == StatusFail:
			return br, nil
		case !ok:
			return br.failed(ClassStructural, fmt.Sprintf("branch %s stopped at %s (outcome %s): no outgoing edge leads on to fan-in %s", head, n.ID, o.Status, fanIn)), nil
		case sel.edge.LoopRestart:
			return br.failed(ClassStructural, fmt.Sprintf("branch %s: loop_restart edge %s -> %s is not allowed inside a parallel branch", head, n.ID, sel.edge.To)), nil
		}
		if o.Status == StatusFail && !r.p.isConditional(sel.edge.To) {
			routed = true
			if sel.edge.To == fanIn {
				pending = nil
			}
		}
		r.emitEdge(ctx, n.ID, transition{next: sel.edge.To, method: sel.method, edge: sel.edge})
		if sel.edge.To == fanIn {
			return br, nil
		}
		cur = sel.edge.To
	}
}

// cutCheckpoint is the result of branch head when it was canceled (a
// sibling won first_success, another branch stopped the run, the run was
// canceled) while the checkpoint after n was being written, which the
// cancel cut short (err): not a stop of its own. A failure n had before
// the cancel is kept, so the run does not forget it; a success counts as
// canceled, since nothing of it was committed.
func cutCheckpoint(br BranchResult, ln *lane, n *Node, o Outcome, head string, err error) BranchResult {
	br.LastNode = failedStep(ln, n)
	if o.Status == StatusFail && o.FailureClass != ClassCanceled {
		br.Status, br.FailureReason, br.FailureClass = o.Status, o.FailureReason, o.FailureClass
		return br
	}
	return br.failed(ClassCanceled, fmt.Sprintf("branch %s canceled while the checkpoint after node %s was written: %v", head, n.ID, err))
}

// failedStep is the node a branch's outcome comes from: n, or for a
// diamond, which passes an outcome on, the step that produced it.
func failedStep(ln *lane, n *Node) string {
	if n.Kind == KindConditional {
		if src, ok := ln.rc.String("last_stage"); ok && src != "" {
			return src
		}
	}
	return n.ID
}

// branchObstacle says why a branch cannot continue into node id.
func branchObstacle(n *Node, id string) string {
	switch {
	case n == nil:
		return fmt.Sprintf("branch edge leads to %q, which is not a node", id)
	case n.Kind == KindExit, n.Kind == KindStart:
		return fmt.Sprintf("branch reached %s node %s before its fan-in", n.Kind, n.ID)
	case n.Kind == KindParallel, n.Kind == KindFanIn:
		return fmt.Sprintf("nested parallel node %s inside a branch is not supported yet", n.ID)
	}
	return ""
}

func (br BranchResult) failed(class FailureClass, reason string) BranchResult {
	br.Status, br.FailureReason, br.FailureClass = StatusFail, reason, class
	return br
}

// branchCheckpoint checkpoints a branch node; the run resumes at the
// parallel node.
func (r *run) branchCheckpoint(ctx context.Context, parallel, n *Node, o Outcome, end *attemptEnd) error {
	next := r.st.NextNode
	r.st.NextNode = parallel.ID
	err := r.checkpoint(ctx, n, o, end)
	r.st.NextNode = next
	return err
}

// findFanIn returns the nearest fan-in node reachable from a parallel
// node (breadth first, lexical among equals), or "".
func findFanIn(p *Pipeline, from string) string {
	seen := map[string]bool{from: true}
	frontier := []string{from}
	for len(frontier) > 0 {
		var next, hits []string
		for _, id := range frontier {
			for _, e := range p.Outgoing(id) {
				if seen[e.To] {
					continue
				}
				seen[e.To] = true
				if n := p.Node(e.To); n != nil && n.Kind == KindFanIn {
					hits = append(hits, e.To)
				}
				next = append(next, e.To)
			}
		}
		if len(hits) > 0 {
			return slices.Min(hits)
		}
		frontier = next
	}
	return ""
}

// fanInHandler joins the branches: it merges the context updates of the
// branches that succeeded, in branch order (later branches win a shared
// key), merges their workspaces when they had their own (a merge conflict
// fails the node), and names the best branch. After a failed parallel node
// it merges nothing and passes the failure on (branch_policy.go).
func fanInHandler(ctx context.Context, s *Stage) (Outcome, error) {
	if o, ok := passOnParallelFailure(s); ok {
		return o, nil
	}
	results, err := branchResults(s.Context)
	if err != nil || len(results) == 0 {
		return failOutcome(ClassStructural, fmt.Sprintf(
			"fan-in %s found no parallel results: it must follow a parallel (shape=component) node", s.Node.ID)), nil
	}
	merged := map[string]any{}
	best := -1
	for i, br := range results {
		if !isSuccess(br.Status) {
			continue
		}
		for k, v := range br.ContextUpdates {
			merged[k] = v
		}
		if best < 0 || (br.Status == StatusSuccess && results[best].Status != StatusSuccess) {
			best = i
		}
	}
	if best < 0 {
		return failOutcome(ClassDeterministic, fmt.Sprintf("fan-in %s: no branch succeeded", s.Node.ID)), nil
	}
	joined := joinBranches(ctx, s, results)
	if joined.Status == StatusFail {
		return joined, nil
	}
	merged["parallel.fan_in.best_id"] = results[best].Branch
	merged["parallel.fan_in.best_outcome"] = string(results[best].Status)
	return Outcome{Status: StatusSuccess, ContextUpdates: merged,
		Notes: joinNotes("best branch: "+results[best].Branch, joined.Notes)}, nil
}

// branchResults reads parallel.results, which may be typed (this run) or
// decoded JSON (a resumed run).
func branchResults(c *Context) ([]BranchResult, error) {
	v, ok := c.Get("parallel.results")
	if !ok {
		return nil, nil
	}
	if rs, ok := v.([]BranchResult); ok {
		return rs, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var rs []BranchResult
	return rs, json.Unmarshal(b, &rs)
}
