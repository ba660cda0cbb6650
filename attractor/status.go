package attractor

// Status is a node outcome status. Conditions compare `outcome` against
// these canonical spellings.
type Status string

const (
	StatusSuccess        Status = "success"
	StatusPartialSuccess Status = "partial_success"
	StatusRetry          Status = "retry"
	StatusFail           Status = "fail"
	StatusSkipped        Status = "skipped"
)

// Custom reports whether s is a custom outcome: a routing decision such
// as needs_dod that a status file wrote, not one of the five statuses.
func (s Status) Custom() bool {
	switch s {
	case "", StatusSuccess, StatusPartialSuccess, StatusRetry, StatusFail, StatusSkipped:
		return false
	}
	return true
}

// Succeeded reports whether s counts as success for retries, goal gates
// and checks: success, partial_success, or a custom outcome.
func (s Status) Succeeded() bool {
	return s == StatusSuccess || s == StatusPartialSuccess || s.Custom()
}

// isCustomOutcome reports whether s, already lower-cased, is spelled like
// a custom outcome: [a-z][a-z0-9_]*.
func isCustomOutcome(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !(c == '_' || 'a' <= c && c <= 'z' || isDigit(c)) {
			return false
		}
	}
	return true
}

// FailureClass classifies why a node failed; it decides retries and the
// cycle breaker.
type FailureClass string

const (
	ClassTransientInfra  FailureClass = "transient_infra"
	ClassDeterministic   FailureClass = "deterministic"
	ClassBudgetExhausted FailureClass = "budget_exhausted"
	ClassStructural      FailureClass = "structural"
	ClassCanceled        FailureClass = "canceled"
)
