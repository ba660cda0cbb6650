package attractor

import (
	"context"
	"math"
	"strconv"
	"time"
)

// Default retry backoff for pipelines built without Load (Load fills
// Node.Retry from retry.backoff.* with its own defaults).
var defaultBackoff = Backoff{Initial: 200 * time.Millisecond, Factor: 2, Max: time.Minute, Jitter: 0.5}

// effectiveBackoff is the node's policy, else the graph's, else the
// default. Policies are taken whole: an explicit jitter of 0 must stay 0.
func effectiveBackoff(node, graph Backoff) Backoff {
	for _, b := range []Backoff{node, graph} {
		if b.Initial > 0 {
			if b.Factor <= 0 {
				b.Factor = 1
			}
			b.Jitter = min(max(b.Jitter, 0), 1)
			return b
		}
	}
	return defaultBackoff
}

// Delay returns the wait before retry number retry (1-based): Initial ×
// Factor^(retry-1), capped at Max, then scaled by a factor drawn from
// [1-Jitter, 1+Jitter] using r in [0,1).
func (b Backoff) Delay(retry int, r float64) time.Duration {
	d := float64(b.Initial) * math.Pow(b.Factor, float64(max(retry-1, 0)))
	if b.Max > 0 && d > float64(b.Max) {
		d = float64(b.Max)
	}
	d *= 1 - b.Jitter + 2*b.Jitter*r
	return time.Duration(d)
}

// shouldRetry decides whether an attempt's outcome earns another attempt:
// RETRY always does, FAIL only when its class is transient_infra.
func shouldRetry(o Outcome) bool {
	switch o.Status {
	case StatusRetry:
		return true
	case StatusFail:
		return o.FailureClass == ClassTransientInfra
	}
	return false
}

// exhausted turns the last outcome of a node whose retries ran out into
// its final outcome. A RETRY becomes PARTIAL_SUCCESS when the node allows
// partial results, else a budget_exhausted FAIL; a FAIL stays as it is.
func exhausted(n *Node, o Outcome, attempts int) Outcome {
	if o.Status != StatusRetry {
		return o
	}
	if n.AllowPartial {
		o.Status = StatusPartialSuccess
		o.Notes = joinNotes(o.Notes, "retries exhausted, partial result accepted")
		return finishFailure(o)
	}
	o.Status = StatusFail
	o.FailureClass = ClassBudgetExhausted // meta from the node still wins
	o.FailureReason = retriesExhaustedReason(attempts, o.FailureReason)
	o.FailureSignature = ""
	return finishFailure(o)
}

func retriesExhaustedReason(attempts int, last string) string {
	r := "max retries exceeded after " + strconv.Itoa(attempts) + " attempts"
	if last != "" {
		r += ": " + last
	}
	return r
}

func joinNotes(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// sleepContext waits for d or until ctx is done.
func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
