package checks

import (
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// Check run statuses and conclusions, as GitHub names them.
const (
	StatusQueued     = "queued"
	StatusInProgress = "in_progress"
	StatusCompleted  = "completed"

	ConclusionSuccess   = "success"
	ConclusionFailure   = "failure"
	ConclusionNeutral   = "neutral"
	ConclusionCancelled = "cancelled"
	ConclusionSkipped   = "skipped"
	ConclusionTimedOut  = "timed_out"
)

// NodeConclusion is the status and conclusion of a verify node's check:
//
//	node state                                 status       conclusion
//	pending                                    queued       —
//	running, retrying                          in_progress  —
//	success                                    completed    success
//	partial (partial_success)                  completed    neutral
//	failed, transient_infra after a timeout    completed    timed_out
//	failed, canceled                           completed    cancelled
//	failed, any other class                    completed    failure
//	cancelled (stopped mid-attempt)            completed    cancelled
//	skipped, never reached, run cancelled      completed    cancelled
//	skipped, never reached otherwise           completed    skipped
//	skipped by its own handler                 completed    skipped
//
// A node the run never reached because the run was cancelled or
// superseded is cancelled rather than skipped, so that every check of a
// superseded run says so; neutral is kept for partial success, which
// GitHub, like the engine, does not count as a failure.
func NodeConclusion(v *RunView, n *NodeView) (status, conclusion string) {
	switch n.State {
	case StatePending:
		return StatusQueued, ""
	case StateRunning, StateRetrying:
		return StatusInProgress, ""
	case StateSuccess:
		return StatusCompleted, ConclusionSuccess
	case StatePartial:
		return StatusCompleted, ConclusionNeutral
	case StateFailed:
		return StatusCompleted, failureConclusion(n.Outcome)
	case StateCancelled:
		return StatusCompleted, ConclusionCancelled
	}
	if v.Status == RunCancelled && !n.HasOutcome {
		return StatusCompleted, ConclusionCancelled
	}
	return StatusCompleted, ConclusionSkipped
}

// RunConclusion is the status and conclusion of the kilroy/<pipeline>
// check: queued, in progress, then success, neutral (a partial run: its
// pipeline tolerated a failure), failure, timed_out (the run failed on a
// timeout) or cancelled. A finished run whose branch could not be pushed
// is a failure.
func RunConclusion(v *RunView) (status, conclusion string) {
	if v.PushError != "" && v.Finished() && v.Status != RunCancelled {
		return StatusCompleted, ConclusionFailure
	}
	switch v.Status {
	case RunPending:
		return StatusQueued, ""
	case RunRunning:
		return StatusInProgress, ""
	case RunSuccess:
		return StatusCompleted, ConclusionSuccess
	case RunPartial:
		return StatusCompleted, ConclusionNeutral
	case RunCancelled:
		return StatusCompleted, ConclusionCancelled
	}
	return StatusCompleted, failureConclusion(attractor.Outcome{
		Status: attractor.StatusFail, FailureClass: v.FailureClass, FailureReason: v.Reason,
	})
}

// failureConclusion maps a failed outcome by its class.
func failureConclusion(o attractor.Outcome) string {
	switch failureClass(o) {
	case attractor.ClassCanceled:
		return ConclusionCancelled
	case attractor.ClassTransientInfra:
		if timedOut(o) {
			return ConclusionTimedOut
		}
	}
	return ConclusionFailure
}

// timedOut reports whether a transient failure was a timeout. The engine
// says so only in the reason ("… timed out after 10m0s …"); a boolean
// "timed_out" in Meta, should it add one, wins.
func timedOut(o attractor.Outcome) bool {
	if b, ok := o.Meta["timed_out"].(bool); ok {
		return b
	}
	return strings.Contains(strings.ToLower(o.FailureReason), "timed out")
}
