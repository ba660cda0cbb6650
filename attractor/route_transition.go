package attractor

import (
	"fmt"
	"strings"
)

// transition is where the main lane goes after a node: next ("" ends the
// run successfully) or stop.
type transition struct {
	next    string
	method  EdgeMethod
	edge    *Edge
	restart bool
	stop    *stopError
}

// transition decides the next node after n finished with o; it applies a
// loop restart to the state when it takes one.
func (r *run) transition(n *Node, o Outcome) transition {
	switch {
	case o.Status == StatusFail && r.st.Signatures[signatureKey(n.ID, o)] >= r.signatureLimit():
		return transition{stop: r.cycleStop(n, o)}
	case n.Kind == KindExit:
		if o.Status == StatusFail {
			return transition{stop: stop(n.ID, o.FailureClass, "exit %s failed: %s", n.ID, o.FailureReason)}
		}
		return transition{}
	case n.Kind == KindParallel:
		return r.afterParallel(n, o)
	}
	sel, ok := selectEdge(r.p.Outgoing(n.ID), o, r.condVars(r.main, o), r.p.isConditional)
	if ok {
		return r.follow(n, o, sel)
	}
	if o.Status == StatusFail {
		if t := retryTarget(r.p, r.failureChain(n, o)...); t != "" {
			return transition{next: t, method: ByRetryTarget}
		}
		return transition{stop: r.failStop(n, o)}
	}
	return transition{stop: r.noEdgeStop(n, o)}
}

// afterParallel goes on to the fan-in whatever the parallel node's
// outcome: its edges are the branches, and the fan-in passes a failure on
// to its own edges. Without a fan-in the node failed, and only the retry
// target chain is left.
func (r *run) afterParallel(n *Node, o Outcome) transition {
	if fanIn := findFanIn(r.p, n.ID); fanIn != "" {
		return transition{next: fanIn, method: ByFanIn}
	}
	if t := retryTarget(r.p, n); t != "" && o.Status == StatusFail {
		return transition{next: t, method: ByRetryTarget}
	}
	if o.Status == StatusFail {
		return transition{stop: r.failStop(n, o)}
	}
	return transition{stop: r.noEdgeStop(n, o)}
}

// failureChain is whose retry targets a failure of n may take: n's, and
// after a fan-in that passed a parallel node's failure on, that node's.
func (r *run) failureChain(n *Node, o Outcome) []*Node {
	if p := r.p.Node(passedOnFrom(n, o)); p != nil {
		return []*Node{n, p}
	}
	return []*Node{n}
}

// failStop ends the run after n failed with nowhere to go. A conditional
// node only passed on the failure of the step before it (last_stage),
// which the stop is attributed to; a goal gate says it is one.
func (r *run) failStop(n *Node, o Outcome) *stopError {
	if n.Kind == KindConditional {
		if src, ok := r.main.rc.String("last_stage"); ok && src != "" && src != n.ID {
			return stop(src, o.FailureClass, "node %s failed: %s (conditional %s has no edge for outcome=fail)", src, o.FailureReason, n.ID)
		}
	}
	if from := passedOnFrom(n, o); from != "" {
		return stop(from, o.FailureClass, "%s (fan-in %s has no edge for outcome=fail)", o.FailureReason, n.ID)
	}
	if n.GoalGate {
		return stop(n.ID, o.FailureClass, "goal gate %s unsatisfied: node %s failed: %s", n.ID, n.ID, o.FailureReason)
	}
	return stop(n.ID, o.FailureClass, "node %s failed: %s", n.ID, o.FailureReason)
}

// follow takes the selected edge, restarting the loop when it asks to.
// A loop restart is taken after whatever outcome selected the edge; the
// failure-signature counters survive it, so a deterministic failure that
// loops through restarts still meets failure_signature_limit, and
// max_restarts bounds the rest.
func (r *run) follow(n *Node, o Outcome, sel selection) transition {
	tr := transition{next: sel.edge.To, method: sel.method, edge: sel.edge}
	if !sel.edge.LoopRestart {
		return tr
	}
	if r.st.Restarts >= r.settings.maxRestarts {
		last := "outcome " + string(o.Status)
		if o.FailureReason != "" {
			last += ": " + o.FailureReason
		}
		return transition{stop: stop(n.ID, ClassBudgetExhausted,
			"loop restarted %d times, the max_restarts limit; last restart edge %s -> %s after %s", r.st.Restarts, n.ID, sel.edge.To, last)}
	}
	r.restartLoop()
	tr.restart = true
	return tr
}

// restartCountKey counts the loop restarts of a run in its context, the
// key Kilroy and tracker pipelines test (context.internal.loop_restart_count=0).
const restartCountKey = "internal.loop_restart_count"

// restartLoop gives the run fresh retry and visit counters, goal gates
// and a fresh context that keeps only the graph mirror,
// loop_restart_persist_keys and the restart count. Failure-signature
// counters are kept: they are what stops a deterministic cycle.
func (r *run) restartLoop() {
	st := r.st
	st.Restarts++
	st.resetLoopState()
	for _, k := range r.main.rc.Keys() {
		if !strings.HasPrefix(k, "graph.") && !r.settings.persists(k) {
			r.main.rc.delete(k)
		}
	}
	r.main.rc.Set(restartCountKey, st.Restarts)
}

func (r *run) signatureLimit() int {
	if r.p.FailureSignatureLimit > 0 {
		return r.p.FailureSignatureLimit
	}
	return 3
}

func (r *run) cycleStop(n *Node, o Outcome) *stopError {
	return stop(n.ID, o.FailureClass,
		"node %s failed %d times with the same failure signature %q (class %s), the failure_signature_limit; stopping the loop. Last failure: %s",
		n.ID, r.st.Signatures[signatureKey(n.ID, o)], o.FailureSignature, o.FailureClass, o.FailureReason)
}

// noEdgeStop explains why a node that did not fail has nowhere to go.
func (r *run) noEdgeStop(n *Node, o Outcome) *stopError {
	edges := r.p.Outgoing(n.ID)
	if o.Status.Custom() {
		return customStop(n, o.Status, edges)
	}
	if len(edges) == 0 {
		return stop(n.ID, ClassStructural,
			"node %s finished with outcome %s but has no outgoing edge; only exit nodes (shape=Msquare) may end a run", n.ID, o.Status)
	}
	conds := make([]string, 0, len(edges))
	for _, e := range edges {
		if e.Condition != nil {
			conds = append(conds, fmt.Sprintf("%s [%s]", e.To, e.Condition.Source))
		}
	}
	return stop(n.ID, ClassStructural,
		"node %s finished with outcome %s and no outgoing edge matches (conditions: %s); add an unconditional edge or a condition for this outcome",
		n.ID, o.Status, strings.Join(conds, ", "))
}

// customStop explains a custom outcome no edge names.
func customStop(n *Node, st Status, edges []*Edge) *stopError {
	could := make([]string, 0, len(edges))
	for _, e := range edges {
		if e.Condition != nil {
			could = append(could, fmt.Sprintf("%s -> %s [%s]", e.From, e.To, e.Condition.Source))
		} else {
			could = append(could, fmt.Sprintf("%s -> %s (unconditional)", e.From, e.To))
		}
	}
	if len(could) == 0 {
		could = append(could, "none")
	}
	return stop(n.ID, ClassStructural,
		"node %s finished with custom outcome %q and no edge names it (edges: %s); a custom outcome routes only through condition=\"outcome=%s\" or an edge labelled %s",
		n.ID, string(st), strings.Join(could, ", "), st, st)
}

// condVars is what edge conditions see after a node on ln finished with o.
func (r *run) condVars(ln *lane, o Outcome) CondVars {
	return CondVars{Outcome: o.Status, PreferredLabel: o.PreferredLabel, Context: ln.rc.String}
}
