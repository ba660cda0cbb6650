package attractor

import (
	"context"
	"fmt"
)

// Context keys the house sets in the parent when its child ends.
const (
	childStatusKey  = "stack.child.status"  // running, then completed, stopped or failed
	childOutcomeKey = "stack.child.outcome" // the child's outcome: success or fail
)

// Values of stack.child.status.
const (
	childRunning   = "running"   // while the child runs
	childCompleted = "completed" // the child passed its exit
	childStopped   = "stopped"   // manager.stop_condition held between child nodes
	childFailed    = "failed"
)

// manage is the house node's handler (see manager_spec.go): it runs the
// child pipeline on the house's lane until the child passes its exit, the
// stop condition holds, the child fails or max_cycles child steps are
// spent. A run stop inside the child (cancellation, a failed checkpoint)
// stops the run.
func (r *run) manage(ctx context.Context, s *Stage) (Outcome, error) {
	n := s.Node
	ms, err := managerSpecOf(r.p, n)
	if err != nil {
		return failOutcome(ClassStructural, fmt.Sprintf("node %s: %v", n.ID, err)), nil
	}
	if d := managerDepth(n.ID); d > maxManagerDepth {
		return failOutcome(ClassStructural, fmt.Sprintf(
			"node %s: manager loops nest %d deep, over the limit of %d (does a child pipeline run itself?)", n.ID, d, maxManagerDepth)), nil
	}
	if ms.steer {
		r.log.WarnContext(ctx, "manager.actions steer is refused: the child runs in the house node itself, nothing can be steered",
			"run", r.cfg.RunID, "node", n.ID)
	}
	child, err := r.loadChild(n, ms)
	if err != nil {
		return failOutcome(ClassStructural, fmt.Sprintf("node %s: %v", n.ID, err)), nil
	}
	f := &managerFrame{house: n, parent: r.frame, resume: r.st.NextNode, rc: s.Context}
	cr := r.childRun(child, f)
	o, err := cr.runChild(ctx, ms)
	r.st.NextNode = f.resume // the child moved it; the house's own step sets it
	if err == nil && o.Status == StatusFail {
		f.rollback()
	}
	f.clear()
	r.st.dropGoalGates(n.ID + childSep)
	if err != nil {
		return Outcome{}, err
	}
	return o, nil
}

// childRun is the run of a house's child: the same configuration, state
// and listener with the child pipeline, on the house's context.
func (r *run) childRun(child *Pipeline, f *managerFrame) *run {
	return &run{
		p: child, cfg: r.cfg, st: r.st, lis: r.lis, log: r.log,
		settings: settingsOf(child), started: r.started, frame: f,
		main: &lane{rc: f.rc},
	}
}

// runChild walks the child from its start, or from where a resumed run's
// notes say it was, and says how it ended.
func (cr *run) runChild(ctx context.Context, ms managerSpec) (Outcome, error) {
	f := cr.frame
	cur, cycles, failed := cr.beginChild()
	if failed != nil {
		return childEnd(childFailed, *failed), nil
	}
	for {
		if prev := cr.main.prevOutcome; ms.stop != nil && cycles > 0 && prev != nil && ms.stop.Eval(cr.condVars(cr.main, *prev)) {
			return childEnd(childStopped, Outcome{Status: StatusSuccess,
				Notes: fmt.Sprintf("child %s stopped before %s: %s holds", cr.p.File, cur, ms.stop.Source)}), nil
		}
		if cycles >= ms.maxCycles {
			return childEnd(childFailed, failOutcome(ClassBudgetExhausted, fmt.Sprintf(
				"node %s: the child %s took %d steps, the manager.max_cycles limit, without reaching its exit (next: %s)",
				f.house.ID, cr.p.File, cycles, cur))), nil
		}
		st, err := cr.childStep(ctx, cur, cycles+1)
		switch {
		case err != nil:
			return Outcome{}, err
		case st.failed != nil:
			return childEnd(childFailed, failOutcome(st.failed.class, fmt.Sprintf(
				"node %s: child %s failed: %s", f.house.ID, cr.p.File, st.failed.reason))), nil
		case st.ran:
			cycles++
		}
		if st.done {
			return childEnd(childCompleted, Outcome{Status: StatusSuccess,
				Notes: fmt.Sprintf("child %s completed in %d steps", cr.p.File, cycles)}), nil
		}
		cur = st.next
	}
}

// beginChild returns the child node to run first and the steps taken:
// where a resumed run's notes say the child was, else its start, with the
// state and context readied for a new run of the child. failed is set when
// the child cannot begin.
func (cr *run) beginChild() (cur string, cycles int, failed *Outcome) {
	f := cr.frame
	cur, cycles, resumed := f.resumePoint()
	if resumed {
		if cr.p.Node(cur) == nil {
			o := failOutcome(ClassStructural, fmt.Sprintf(
				"node %s: the run resumes its child at %s, which %s no longer has", f.house.ID, cur, cr.p.File))
			return "", 0, &o
		}
		cr.main.prev = cr.st.CurrentNode
		if o, ok := cr.st.Outcomes[cr.st.CurrentNode]; ok {
			cr.main.prevOutcome = &o
		}
		return cur, cycles, nil
	}
	start, err := startNode(cr.p)
	if err != nil {
		o := failOutcome(ClassStructural, fmt.Sprintf("node %s: %v", f.house.ID, err))
		return "", 0, &o
	}
	cr.st.forgetChild(f.house.ID + childSep)
	f.keepBase()
	f.rc.Set(childStatusKey, childRunning) // not what an earlier run of the child left
	if _, ok := f.rc.Get(childOutcomeKey); ok {
		f.rc.delete(childOutcomeKey)
	}
	return start.ID, 0, nil
}

// childStepped is how one step of a child went.
type childStepped struct {
	next   string     // the child node to run next
	ran    bool       // a node was executed (not only a goal-gate jump)
	done   bool       // the child passed its exit
	failed *stopError // the child failed
}

// childStep executes child node id, the cycles-th step, and checkpoints
// it. The error is a run stop (cancellation, a failed checkpoint, a stop
// from a node's handler), which ends the whole run.
func (cr *run) childStep(ctx context.Context, id string, cycles int) (childStepped, error) {
	n := cr.p.Node(id)
	if n == nil {
		return childStepped{failed: stop("", ClassStructural, "next child node %q is not in the pipeline", id)}, nil
	}
	if n.Kind == KindExit {
		if target, blocked, se := cr.childGoalGates(ctx, n); se != nil || blocked {
			return childStepped{next: target, failed: se}, nil
		}
	}
	o, end, err := cr.executeNode(ctx, cr.main, n)
	if err != nil {
		return childStepped{}, err
	}
	defer end.finish(ctx)
	if ctx.Err() != nil {
		return childStepped{}, stop(n.ID, ClassCanceled, "run canceled during node %s: %v", n.ID, context.Cause(ctx))
	}
	tr := cr.childTransition(n, o)
	cr.st.NextNode = tr.next
	if tr.next == "" {
		cr.st.NextNode = n.ID // a resume after the child ended runs its last node again
	}
	cr.frame.rc.Set(cr.frame.cyclesKey(), cycles)
	if err := cr.checkpoint(ctx, n, o, end); err != nil {
		return childStepped{}, err
	}
	if tr.stop != nil {
		return childStepped{ran: true, failed: tr.stop}, nil
	}
	if tr.next != "" {
		cr.emitEdge(ctx, n.ID, tr)
	}
	return childStepped{next: tr.next, ran: true, done: tr.next == ""}, nil
}

// childTransition is transition inside a child, where a loop restart
// (which resets the whole run) is not allowed.
func (cr *run) childTransition(n *Node, o Outcome) transition {
	if n.Kind != KindExit && n.Kind != KindParallel {
		if sel, ok := selectEdge(cr.p.Outgoing(n.ID), o, cr.condVars(cr.main, o), cr.p.isConditional); ok && sel.edge.LoopRestart {
			return transition{stop: stop(n.ID, ClassStructural,
				"loop_restart edge %s -> %s is not allowed inside a manager loop's child; route the loop with plain edges", n.ID, sel.edge.To)}
		}
	}
	return cr.transition(n, o)
}

// childGoalGates checks the child's goal gates before its exit runs.
func (cr *run) childGoalGates(ctx context.Context, exit *Node) (next string, blocked bool, failed *stopError) {
	g, ok := cr.st.childGate(cr.frame.house.ID + childSep)
	if !ok {
		return "", false, nil
	}
	target := ""
	if gate := cr.p.Node(g.Node); gate != nil {
		target = retryTarget(cr.p, gate)
	}
	if target == "" {
		return "", false, stop(g.Node, ClassDeterministic, "goal gate %s unsatisfied (status %s) and no retry_target is set", g.Node, g.Status)
	}
	cr.emitEdge(ctx, exit.ID, transition{next: target, method: ByGoalGate})
	return target, true, nil
}

// childEnd is the house's outcome for a child that ended as status says,
// with stack.child.status and stack.child.outcome set in the parent.
func childEnd(status string, o Outcome) Outcome {
	outcome := string(StatusSuccess)
	if o.Status == StatusFail {
		outcome = string(StatusFail)
	}
	return o.withContextUpdate(childStatusKey, status).withContextUpdate(childOutcomeKey, outcome)
}
