package attractor

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/kilroy-bot/kilroy-bot/attractor/dot"
)

// Severity says how bad a diagnostic is. The engine refuses to run a
// pipeline with any error; warnings and infos never block.
type Severity string

const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

// EdgeRef names the edge a diagnostic is about.
type EdgeRef struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Diagnostic is one finding of Load or Validate. Rule ids are a user
// contract (docs/rules.md documents each); Line and Col point at the most
// precise thing: an attribute's value, an edge's target, a node's ID.
type Diagnostic struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	File     string   `json:"file"`
	Line     int      `json:"line"`
	Col      int      `json:"column"`
	Node     string   `json:"node,omitempty"`
	Edge     *EdgeRef `json:"edge,omitempty"`
	Message  string   `json:"message"`
	Fix      string   `json:"fix,omitempty"`
}

// Pos returns the diagnostic's position.
func (d Diagnostic) Pos() dot.Pos { return dot.Pos{File: d.File, Line: d.Line, Col: d.Col} }

// String formats d the way gcc does, so editors and CI problem matchers
// read it: FILE:LINE:COL: severity: message [rule]. The fix is not part
// of it; callers print it on a line of its own.
func (d Diagnostic) String() string {
	return fmt.Sprintf("%s: %s: %s [%s]", d.Pos(), d.Severity, d.Message, d.Rule)
}

// Diagnostics is a list of diagnostics.
type Diagnostics []Diagnostic

// Sort orders ds by file, line and column; ties keep their order.
func (ds Diagnostics) Sort() {
	slices.SortStableFunc(ds, func(a, b Diagnostic) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
	})
}

// Count returns how many diagnostics have severity s.
func (ds Diagnostics) Count(s Severity) int {
	n := 0
	for _, d := range ds {
		if d.Severity == s {
			n++
		}
	}
	return n
}

// HasErrors reports whether any diagnostic is an error.
func (ds Diagnostics) HasErrors() bool { return ds.Count(SeverityError) > 0 }

// Errors returns only the error-severity diagnostics.
func (ds Diagnostics) Errors() Diagnostics {
	var out Diagnostics
	for _, d := range ds {
		if d.Severity == SeverityError {
			out = append(out, d)
		}
	}
	return out
}

// ValidationError is what Load returns when the pipeline has errors: the
// pipeline must not run. Diagnostics holds the errors only.
type ValidationError struct {
	Diagnostics Diagnostics
}

func (e *ValidationError) Error() string {
	if len(e.Diagnostics) == 0 {
		return "invalid pipeline"
	}
	first := e.Diagnostics[0]
	if n := len(e.Diagnostics) - 1; n > 0 {
		return fmt.Sprintf("%s: %s (and %d more errors)", first.Pos(), first.Message, n)
	}
	return fmt.Sprintf("%s: %s", first.Pos(), first.Message)
}

// reporter collects diagnostics. Severity comes from the rule table, so a
// rule cannot be emitted with two severities.
type reporter struct {
	diags Diagnostics
	seen  map[diagKey]bool
}

// diagKey deduplicates findings about one written value shared by many
// nodes (a `node [shape=boxx]` default reaches every node of its scope).
type diagKey struct {
	rule string
	pos  dot.Pos
	msg  string
}

func (r *reporter) add(d Diagnostic) {
	k := diagKey{d.Rule, d.Pos(), d.Message}
	if r.seen == nil {
		r.seen = map[diagKey]bool{}
	}
	if r.seen[k] {
		return
	}
	r.seen[k] = true
	d.Severity = ruleSeverity(d.Rule)
	r.diags = append(r.diags, d)
}

// at reports rule at pos.
func (r *reporter) at(rule string, pos dot.Pos, msg, fix string) {
	r.add(Diagnostic{Rule: rule, File: pos.File, Line: pos.Line, Col: pos.Col, Message: msg, Fix: fix})
}

// node reports rule about node n at pos.
func (r *reporter) node(rule string, n *Node, pos dot.Pos, msg, fix string) {
	r.add(Diagnostic{Rule: rule, File: pos.File, Line: pos.Line, Col: pos.Col, Node: n.ID, Message: msg, Fix: fix})
}

// edge reports rule about edge e at pos.
func (r *reporter) edge(rule string, e *Edge, pos dot.Pos, msg, fix string) {
	r.add(Diagnostic{Rule: rule, File: pos.File, Line: pos.Line, Col: pos.Col,
		Edge: &EdgeRef{From: e.From, To: e.To}, Message: msg, Fix: fix})
}
