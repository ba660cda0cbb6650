package attractor

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Failure classification and signatures.
//
// A failure's class decides whether it is retried (only transient_infra)
// and whether a loop_restart edge may be taken. Its signature is a
// normalised, prose-insensitive key: the cycle breaker counts failures per
// node, class and signature, so a node that keeps failing the same way is
// stopped even when the wording (timestamps, temp paths, counts) varies.

const maxSignatureLen = 200

var (
	hexRunRE = regexp.MustCompile(`[0-9a-f]{7,}`)
	numberRE = regexp.MustCompile(`[0-9]+`)
)

// NormalizeSignature folds text into a stable signature: lowercase, runs of
// seven or more hex digits become "<hex>", remaining numbers "<n>",
// whitespace collapsed, and the result capped in length.
func NormalizeSignature(s string) string {
	s = strings.ToLower(s)
	s = hexRunRE.ReplaceAllString(s, "<hex>")
	s = numberRE.ReplaceAllString(s, "<n>")
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxSignatureLen {
		s = s[:maxSignatureLen]
	}
	return s
}

// Reason fragments that mark a failure as transient infrastructure (worth
// retrying), an exhausted budget, or a cancellation. Everything else is
// deterministic: re-running the same step would fail the same way, so it
// must not burn retries. The list is short on purpose; handlers that know
// better set the class explicitly.
var (
	transientHints = []string{
		"timed out", "timeout", "deadline exceeded", "connection reset",
		"connection refused", "temporarily unavailable", "temporary failure",
		"rate limit", "too many requests", "service unavailable", "bad gateway",
		"gateway timeout", "no such host", "tls handshake", "broken pipe",
		"econnreset", "network is unreachable", "overloaded",
	}
	budgetHints = []string{
		"budget", "turn limit", "max turns", "token limit", "quota exceeded",
		"max retries exceeded", "retries exhausted",
	}
	canceledHints = []string{"context canceled", "cancelled", "canceled"}
)

// InferFailureClass guesses a class from a failure reason (see the hint
// lists above). The empty reason is deterministic.
func InferFailureClass(reason string) FailureClass {
	r := strings.ToLower(reason)
	switch {
	case containsAny(r, canceledHints):
		return ClassCanceled
	case containsAny(r, budgetHints):
		return ClassBudgetExhausted
	case containsAny(r, transientHints):
		return ClassTransientInfra
	}
	return ClassDeterministic
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// classifyError maps a handler or agent error to a class.
func classifyError(err error) FailureClass {
	switch {
	case errors.Is(err, context.Canceled):
		return ClassCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return ClassTransientInfra
	}
	return InferFailureClass(err.Error())
}

// finishFailure fills in the class and signature of a failed or retrying
// outcome: meta wins over the fields, which win over inference from the
// reason. Successful outcomes lose any stale failure fields.
func finishFailure(o Outcome) Outcome {
	if !o.IsFailure() {
		o.FailureClass, o.FailureSignature = "", ""
		return o
	}
	if c, ok := ParseFailureClass(metaString(o.Meta, "failure_class")); ok {
		o.FailureClass = c
	} else if c, ok := ParseFailureClass(string(o.FailureClass)); ok {
		o.FailureClass = c
	} else {
		o.FailureClass = InferFailureClass(o.FailureReason)
	}
	sig := metaString(o.Meta, "failure_signature")
	if sig == "" {
		sig = o.FailureSignature
	}
	if sig == "" {
		sig = o.FailureReason
	}
	o.FailureSignature = NormalizeSignature(sig)
	return o
}

func metaString(m map[string]any, key string) string {
	v, ok := m[key]
	if !ok || v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return strings.TrimSpace(s)
	}
	return strings.TrimSpace(fmt.Sprint(v))
}

// signatureKey is the cycle breaker's counter key.
func signatureKey(node string, o Outcome) string {
	return node + "|" + string(o.FailureClass) + "|" + o.FailureSignature
}
