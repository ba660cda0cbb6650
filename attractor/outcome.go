package attractor

import (
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor/findings"
)

// Outcome is what one execution of a node produced. It drives routing,
// retries, goal gates and the context; it is written as the node's
// status.json and kept in the run State.
type Outcome struct {
	Status           Status         `json:"status"`
	PreferredLabel   string         `json:"preferred_label,omitempty"`
	SuggestedNextIDs []string       `json:"suggested_next_ids,omitempty"`
	ContextUpdates   map[string]any `json:"context_updates,omitempty"`
	Notes            string         `json:"notes,omitempty"`
	FailureReason    string         `json:"failure_reason,omitempty"`
	FailureClass     FailureClass   `json:"failure_class,omitempty"`
	FailureSignature string         `json:"failure_signature,omitempty"`
	// Meta carries machine-readable facts about the attempt; the keys
	// "failure_class" and "failure_signature" win over the fields above.
	Meta map[string]any `json:"meta,omitempty"`
	// Findings are positions in workspace files a verify step reported;
	// reporters turn them into annotations.
	Findings []findings.Finding `json:"findings,omitempty"`
	// Usage is what an agent attempt consumed (agent nodes only).
	Usage   *Usage         `json:"usage,omitempty"`
	Details map[string]any `json:"details,omitempty"`
	// Response is an agent's final text, written to response.md rather
	// than kept in status.json or the run state.
	Response string `json:"-"`
}

// Succeeded reports whether o counts as success for retries, goal gates
// and checks (a custom outcome does; it routes only where it is named).
func (o Outcome) Succeeded() bool { return o.Status.Succeeded() }

// IsFailure reports whether o is a failure or a retry request, the two
// statuses that carry a reason, class and signature.
func (o Outcome) IsFailure() bool {
	return o.Status == StatusFail || o.Status == StatusRetry
}

// failOutcome is the outcome of a node the engine itself failed.
func failOutcome(class FailureClass, reason string) Outcome {
	return Outcome{Status: StatusFail, FailureClass: class, FailureReason: reason}
}

// withContextUpdate returns o with key set in its context updates; o's map
// is copied so outcomes shared with callers stay untouched.
func (o Outcome) withContextUpdate(key string, v any) Outcome {
	m := make(map[string]any, len(o.ContextUpdates)+1)
	for k, x := range o.ContextUpdates {
		m[k] = x
	}
	m[key] = v
	o.ContextUpdates = m
	return o
}

// ParseStatus canonicalises a status as agents and scripts write it
// (case-insensitive; ok → success, failure/failed/error → fail, skip →
// skipped, partial → partial_success). Any other identifier is a custom
// outcome, lower-cased (Needs_DoD → needs_dod).
func ParseStatus(s string) (Status, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if st, ok := canonicalOutcome(s); ok {
		return st, true
	}
	if isCustomOutcome(s) {
		return Status(s), true
	}
	return "", false
}

// ParseFailureClass canonicalises a failure class; "transient" is accepted
// for transient_infra and "cancelled" for canceled.
func ParseFailureClass(s string) (FailureClass, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "transient_infra", "transient":
		return ClassTransientInfra, true
	case "deterministic":
		return ClassDeterministic, true
	case "budget_exhausted":
		return ClassBudgetExhausted, true
	case "structural":
		return ClassStructural, true
	case "canceled", "cancelled":
		return ClassCanceled, true
	}
	return "", false
}
