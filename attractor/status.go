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
