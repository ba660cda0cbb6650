package attractor

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor/dot"
)

// attrType is the type of a typed attribute.
type attrType int

const (
	typeString attrType = iota
	typeUint            // int ≥ 0
	typeFloat
	typeNumber   // any finite number
	typeFraction // float in [0, 1]
	typeBool
	typeDuration
	typeJoinPolicy
)

// attrTypeOf returns the type of key wherever it is written (graph, node
// or edge: no key changes type between them). Unknown keys are strings.
func attrTypeOf(key string) attrType {
	switch key {
	case "max_retries", "default_max_retries", "default_max_retry", "max_node_visits",
		"max_parallel", "manager.max_cycles":
		return typeUint
	case "failure_signature_limit":
		return typeUint
	case "weight":
		return typeNumber
	case "retry.backoff.factor":
		return typeFloat
	case "retry.backoff.jitter":
		return typeFraction
	case "goal_gate", "allow_partial", "auto_status", "loop_restart", "stack.child_autostart":
		return typeBool
	case "timeout", "retry.backoff.initial", "retry.backoff.max", "manager.poll_interval":
		return typeDuration
	case "join_policy":
		return typeJoinPolicy
	}
	return typeString
}

// typeError is a value that does not fit its attribute's type.
type typeError struct {
	msg, fix string
}

// checkValue returns a typeError when v does not fit the type of key.
func checkValue(key string, v dot.Value) *typeError {
	s := v.Text
	switch attrTypeOf(key) {
	case typeUint:
		if n, err := strconv.Atoi(s); err != nil || n < 0 {
			return &typeError{fmt.Sprintf("%s must be a whole number ≥ 0, not %q", key, s), fmt.Sprintf("write %s=3", key)}
		}
	case typeNumber:
		if f, err := strconv.ParseFloat(s, 64); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return &typeError{fmt.Sprintf("%s must be a number, not %q", key, s), fmt.Sprintf("write %s=1", key)}
		}
	case typeFloat:
		if f, err := strconv.ParseFloat(s, 64); err != nil || f < 1 {
			return &typeError{fmt.Sprintf("%s must be a number ≥ 1, not %q", key, s), fmt.Sprintf("write %s=2.0", key)}
		}
	case typeFraction:
		if f, err := strconv.ParseFloat(s, 64); err != nil || f < 0 || f > 1 {
			return &typeError{fmt.Sprintf("%s must be a number from 0 to 1, not %q", key, s), fmt.Sprintf("write %s=0.2", key)}
		}
	case typeBool:
		if _, ok := parseBool(s); !ok {
			return &typeError{fmt.Sprintf("%s must be true or false, not %q", key, s), fmt.Sprintf("write %s=true", key)}
		}
	case typeDuration:
		if _, err := attrDuration(s); err != nil {
			return &typeError{fmt.Sprintf("%s must be a duration, not %q", key, s), durationFix}
		}
	case typeJoinPolicy:
		if s != "wait_all" && s != "first_success" {
			return &typeError{fmt.Sprintf("join_policy must be wait_all or first_success, not %q", s), `write join_policy="wait_all"`}
		}
	}
	return nil
}

// attrDuration reads a duration attribute: an Attractor duration, or a
// bare whole number of seconds as Kilroy reads timeout=600 (which
// duration_unit warns about).
func attrDuration(s string) (time.Duration, error) {
	if n, ok := bareSeconds(s); ok {
		return time.Duration(n) * time.Second, nil
	}
	return ParseDuration(s)
}

// bareSeconds reports whether s is a whole number other than 0, and its
// value.
func bareSeconds(s string) (int64, bool) {
	if s == "" || len(s) > 12 {
		return 0, false
	}
	for i := range len(s) {
		if !isDigit(s[i]) {
			return 0, false // also spares ParseInt's error allocation
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n > 0
}

// parseBool accepts true and false in any case. 1/0 and yes/no are
// rejected on purpose: one spelling keeps pipelines greppable, and the
// attr_type diagnostic says what to write.
func parseBool(s string) (bool, bool) {
	switch strings.ToLower(s) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// Typed getters. Values were checked when Load first met them (attr_type
// reports the bad ones once, at the written position), so here a bad
// value reads as "unset".

func (a Attrs) str(key string) string { return a[key].Value.Text }

func (a Attrs) has(key string) bool { _, ok := a[key]; return ok }

func (a Attrs) intOr(key string, def int) int {
	if v, ok := a[key]; ok {
		if n, err := strconv.Atoi(v.Value.Text); err == nil {
			return n
		}
	}
	return def
}

func (a Attrs) floatOr(key string, def float64) float64 {
	if v, ok := a[key]; ok {
		if f, err := strconv.ParseFloat(v.Value.Text, 64); err == nil {
			return f
		}
	}
	return def
}

func (a Attrs) boolOr(key string, def bool) bool {
	if v, ok := a[key]; ok {
		if b, ok := parseBool(v.Value.Text); ok {
			return b
		}
	}
	return def
}

func (a Attrs) durOr(key string, def time.Duration) time.Duration {
	if v, ok := a[key]; ok {
		if d, err := attrDuration(v.Value.Text); err == nil {
			return d
		}
	}
	return def
}

// classes splits a comma-separated class list.
func splitList(s string) []string {
	var out []string
	for _, c := range strings.Split(s, ",") {
		if c = strings.TrimSpace(c); c != "" {
			out = append(out, c)
		}
	}
	return out
}
