package attractor

import "strings"

// CondVars is what a condition is evaluated against.
type CondVars struct {
	Outcome        Status
	PreferredLabel string
	// Context looks up a run-context key (without the "context." prefix).
	Context func(key string) (string, bool)
}

// Eval reports whether every clause holds. A nil condition holds.
func (c *Condition) Eval(v CondVars) bool {
	if c == nil {
		return true
	}
	for _, cl := range c.Clauses {
		if !cl.eval(v) {
			return false
		}
	}
	return true
}

func (cl Clause) eval(v CondVars) bool {
	got := v.resolve(cl.Key)
	switch cl.Op {
	case OpEq:
		return got == cl.Value
	case OpNe:
		return got != cl.Value
	default:
		return got != "" && got != "false" && got != "0"
	}
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
