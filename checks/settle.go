package checks

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// settle gives every node that did not finish its final state once the
// run has ended: a node caught mid-attempt is cancelled, a node never
// reached is skipped with the reason it was not. The caller holds mu.
func (r *Recorder) settle() {
	v := &r.view
	for i := range v.Nodes {
		n := &v.Nodes[i]
		switch n.State {
		case StateRunning, StateRetrying:
			n.State = StateCancelled
			n.SkipReason = r.stopReason()
		case StatePending:
			n.State = StateSkipped
			n.SkipReason = r.skipReason(n.ID)
		}
	}
}

// stopReason explains why a node that was running did not finish.
func (r *Recorder) stopReason() string {
	if r.view.Status == RunCancelled {
		return r.cancelled()
	}
	return "stopped: the run failed: " + firstLine(r.view.Reason)
}

// cancelled is the reason cancellation gives.
func (r *Recorder) cancelled() string {
	return firstNonEmpty(r.cancelReason, "run cancelled")
}

// skipReason explains why the run never reached id, preferring what a
// predecessor that did run decided.
func (r *Recorder) skipReason(id string) string {
	v := &r.view
	if v.Status == RunCancelled {
		return r.cancelled()
	}
	if reason := r.predecessorReason(id); reason != "" {
		return "not on the path taken: " + reason
	}
	if v.Status == RunFailed {
		if v.FailedNode != "" {
			return fmt.Sprintf("not on the path taken: %s failed", v.FailedNode)
		}
		return "the run failed before reaching it: " + firstLine(v.Reason)
	}
	return "not on the path taken"
}

// predecessorReason looks at the nodes with an edge into id that ran: a
// failed one is the reason, else where one went instead.
func (r *Recorder) predecessorReason(id string) string {
	var went []string
	for _, e := range r.view.Edges {
		if e.To != id || e.Jump != "" {
			continue
		}
		p := r.view.Node(e.From)
		if p == nil || p.Visits == 0 {
			continue
		}
		if p.State == StateFailed {
			return p.ID + " failed"
		}
		if next := r.takenFrom(p.ID); len(next) > 0 {
			went = append(went, fmt.Sprintf("%s went to %s", p.ID, strings.Join(next, ", ")))
		}
	}
	return strings.Join(went, "; ")
}

// takenFrom lists the targets of transitions taken out of id.
func (r *Recorder) takenFrom(id string) []string {
	var out []string
	for _, e := range r.view.Edges {
		if e.From == id && e.Taken > 0 && !slices.Contains(out, e.To) {
			out = append(out, e.To)
		}
	}
	return out
}

// failureClass is the outcome's class, with the meta key winning as the
// engine documents; an unset class on a failure is deterministic.
func failureClass(o attractor.Outcome) attractor.FailureClass {
	if s, ok := o.Meta["failure_class"].(string); ok {
		if c, ok := attractor.ParseFailureClass(s); ok {
			return c
		}
	}
	if o.FailureClass != "" {
		return o.FailureClass
	}
	if o.IsFailure() {
		return attractor.ClassDeterministic
	}
	return ""
}
