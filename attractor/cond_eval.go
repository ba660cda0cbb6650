package attractor

import (
	"encoding/json"
	"strings"
)

// CondVars is what a condition is evaluated against.
type CondVars struct {
	Outcome        Status
	PreferredLabel string
	// Context looks up a run-context key (without the "context." prefix).
	Context func(key string) (string, bool)
}

// Eval reports whether every clause of some alternative holds. A nil
// condition holds.
func (c *Condition) Eval(v CondVars) bool {
	if c == nil {
		return true
	}
	for _, all := range c.Any {
		if allHold(all, v) {
			return true
		}
	}
	return false
}

// namesHolding reports whether an alternative of c that holds under v has
// the clause outcome=st.
func (c *Condition) namesHolding(st Status, v CondVars) bool {
	if c == nil {
		return false
	}
	for _, all := range c.Any {
		if namesOutcome(all, st) && allHold(all, v) {
			return true
		}
	}
	return false
}

func allHold(all []Clause, v CondVars) bool {
	for _, cl := range all {
		if !cl.eval(v) {
			return false
		}
	}
	return true
}

// eval resolves the clause's key; an unset key reads as "", so it never
// equals a status and contains nothing but "".
func (cl Clause) eval(v CondVars) bool {
	got := v.resolve(cl.Key)
	switch cl.Op {
	case OpEq:
		return got == cl.Value
	case OpNe:
		return got != cl.Value
	case OpContains:
		return contains(got, cl.Value)
	case OpNotContains:
		return !contains(got, cl.Value)
	case OpFalsy:
		return !truthy(got)
	default:
		return truthy(got)
	}
}

func truthy(s string) bool { return s != "" && s != "false" && s != "0" }

// contains is Fabro's contains: membership when the value is a JSON
// array (how the context renders lists), else a substring test.
func contains(got, want string) bool {
	if strings.HasPrefix(got, "[") {
		var list []any
		if json.Unmarshal([]byte(got), &list) == nil {
			for _, x := range list {
				if contextString(x) == want {
					return true
				}
			}
			return false
		}
	}
	return strings.Contains(got, want)
}

func (v CondVars) resolve(key string) string {
	switch key {
	case "outcome":
		return string(v.Outcome)
	case "preferred_label":
		return v.PreferredLabel
	}
	if v.Context == nil {
		return ""
	}
	if s, ok := v.Context(key); ok {
		return s
	}
	if rest, ok := strings.CutPrefix(key, "context."); ok {
		if s, ok := v.Context(rest); ok {
			return s
		}
	}
	return ""
}
