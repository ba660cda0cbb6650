package attractor

import (
	"context"
	"errors"
	"slices"
	"time"
)

// executeNode runs one visit of n on lane ln: its attempts under the retry
// policy, then records the final outcome. The last attempt is announced
// by the attemptEnd, which the caller finishes around its checkpoint (or
// when it gives up); it is nil when err is set or there is no attempt to
// announce. The error is a run stop.
func (r *run) executeNode(ctx context.Context, ln *lane, n *Node) (Outcome, *attemptEnd, error) {
	visit := r.st.Visits[n.ID] + 1
	if lim, over := r.pastVisitLimit(n, visit); over {
		return Outcome{}, nil, stop(n.ID, ClassBudgetExhausted,
			"node %s reached its visit limit (%s=%d); the pipeline is looping", n.ID, r.visitLimitAttr(n), lim)
	}
	r.st.setVisits(n.ID, visit)
	ln.rc.Set("current_node", n.ID)
	ln.rc.Set("previous_node", ln.prev)
	h := r.handlerFor(n)
	r.report(ctx, "node started", r.lis.NodeStarted(ctx, NodeStarted{RunID: r.cfg.RunID, Node: n, Visit: visit, Dir: r.stageDir(n)}))
	o, end, err := r.attempts(ctx, ln, n, h, visit)
	if err != nil {
		return Outcome{}, nil, err
	}
	r.record(ln, n, o)
	return o, end, nil
}

// attempts runs n until an attempt needs no retry or retries run out. An
// attempt that is retried is announced before the next starts; the last
// is returned unannounced (attemptEnd).
func (r *run) attempts(ctx context.Context, ln *lane, n *Node, h Handler, visit int) (Outcome, *attemptEnd, error) {
	backoff := effectiveBackoff(n.Retry, r.p.Retry)
	for attempt := 1; ; attempt++ {
		began := time.Now()
		o, files, err := r.attempt(ctx, ln, n, h, visit, attempt)
		if err != nil {
			return Outcome{}, nil, err
		}
		// A conditional node's outcome is its predecessor's: running it
		// again would give the same answer.
		retry := shouldRetry(o) && ctx.Err() == nil && n.Kind != KindConditional
		final := !retry || attempt > n.MaxRetries
		if retry && final {
			o = exhausted(n, o, attempt)
		}
		end := &attemptEnd{r: r, files: files, ev: AttemptFinished{
			RunID: r.cfg.RunID, Node: n, Attempt: attempt, Final: final, Outcome: o,
			Duration: time.Since(began), Dir: r.stageDir(n),
		}}
		if final {
			return o, end, nil
		}
		if err := end.finish(ctx); err != nil {
			return Outcome{}, nil, stageFilesStop(n, err)
		}
		r.st.setRetries(n.ID, attempt)
		ln.rc.Set("internal.retry_count."+n.ID, attempt)
		if err := r.cfg.Sleep(ctx, backoff.Delay(attempt, r.cfg.Rand())); err != nil {
			o := finishFailure(failOutcome(ClassCanceled, "canceled while waiting to retry: "+err.Error()))
			return o, nil, nil // the attempt before was announced; this outcome has no attempt
		}
	}
}

// record stores n's final outcome in the run state and its lane context.
func (r *run) record(ln *lane, n *Node, o Outcome) {
	st := r.st
	st.Completed = append(st.Completed, n.ID)
	st.setOutcome(n.ID, o)
	st.CurrentNode = n.ID
	if o.Succeeded() {
		st.setRetries(n.ID, 0)
		ln.rc.Set("internal.retry_count."+n.ID, 0)
	}
	if n.GoalGate {
		st.recordGoalGate(n.ID, o.Status)
	}
	// A conditional node passes its predecessor's outcome on: the failure
	// was counted there, and last_stage keeps naming the step that
	// produced it, so a condition after the diamond sees that step.
	conditional := n.Kind == KindConditional
	if o.Status == StatusFail && o.FailureClass != ClassCanceled && !conditional {
		st.addSignature(signatureKey(n.ID, o), 1)
	}
	rc := ln.rc
	rc.Apply(o.ContextUpdates)
	rc.Set("outcome", string(o.Status))
	rc.Set("preferred_label", o.PreferredLabel)
	rc.Set("failure_reason", o.FailureReason)
	rc.Set("failure_class", string(o.FailureClass))
	if !conditional {
		rc.Set("last_stage", n.ID)
	}
	// The list only grows by appends, so a view capped at its length is
	// a value no later append changes, and a copy would cost a node
	// more the longer the run.
	rc.Set(completedNodesKey, slices.Clip(st.Completed))
	ln.prev, ln.prevOutcome = n.ID, &o
}

// pastVisitLimit reports whether visit (from 1) of n is past its visit
// limit (the node's max_node_visits, else the graph's), and
// the limit (0: none).
func (r *run) pastVisitLimit(n *Node, visit int) (lim int, over bool) {
	lim = r.p.MaxNodeVisits
	if n.MaxVisits > 0 {
		lim = n.MaxVisits
	}
	return lim, lim > 0 && visit > lim
}

// visitLimitAttr names the attribute that set n's visit limit as its
// author wrote it (tracker and Fabro write max_visits).
func (r *run) visitLimitAttr(n *Node) string {
	if n.MaxVisits > 0 {
		return cmpOr(n.MaxVisitsAttr, "max_node_visits")
	}
	return cmpOr(r.p.MaxNodeVisitsAttr, "max_node_visits")
}

// checkpoint hands the state after n to the host, while the stage files
// of n's last attempt are still being written, then announces that
// attempt (end) and the checkpoint, in that order. A failure stops the
// run.
func (r *run) checkpoint(ctx context.Context, n *Node, o Outcome, end *attemptEnd) error {
	if r.frame != nil {
		defer r.frame.pinState(r.st)()
	}
	sha, err := r.cfg.Host.Checkpoint(ctx, CheckpointRequest{RunID: r.cfg.RunID, Node: n, Status: o.Status, Delta: r.st.delta(), state: r.st})
	if err == nil {
		r.st.track()
	}
	ferr := end.finish(ctx)
	if refused, ok := errors.AsType[*CheckpointRefusedError](err); ok {
		return stop(n.ID, ClassDeterministic, "node %s: nothing was committed: %s", n.ID, refused.Reason)
	}
	if err != nil {
		return stop(n.ID, ClassTransientInfra, "checkpoint after node %s failed: %v", n.ID, err)
	}
	if ferr != nil {
		return stageFilesStop(n, ferr)
	}
	r.report(ctx, "checkpointed", r.lis.Checkpointed(ctx, Checkpointed{RunID: r.cfg.RunID, Node: n.ID, Status: o.Status, SHA: sha}))
	return nil
}

func (r *run) emitEdge(ctx context.Context, from string, tr transition) {
	r.report(ctx, "edge selected", r.lis.EdgeSelected(ctx, EdgeSelected{
		RunID: r.cfg.RunID, From: from, To: tr.next, Method: tr.method, Edge: tr.edge, LoopRestart: tr.restart,
	}))
}
