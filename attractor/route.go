package attractor

import (
	"regexp"
	"slices"
	"strings"
)

// acceleratorRE matches the shortcut prefixes of human-gate labels:
// "[Y] Yes", "Y) Yes", "Y - Yes".
var acceleratorRE = regexp.MustCompile(`^(?:\[(\w)\]\s*|(\w)\)\s*|(\w)\s+-\s+)`)

// normalizeEdgeLabel is the label form preferred-label matching compares:
// lowercase, trimmed, accelerator prefix removed.
func normalizeEdgeLabel(s string) string {
	s = strings.TrimSpace(s)
	s = acceleratorRE.ReplaceAllString(s, "")
	return strings.ToLower(strings.TrimSpace(s))
}

// acceleratorKey returns a label's shortcut key, else its first letter.
func acceleratorKey(label string) string {
	label = strings.TrimSpace(label)
	if m := acceleratorRE.FindStringSubmatch(label); m != nil {
		for _, g := range m[1:] {
			if g != "" {
				return strings.ToUpper(g)
			}
		}
	}
	for _, r := range label {
		return strings.ToUpper(string(r))
	}
	return ""
}

// selection is a chosen edge and the rule that chose it.
type selection struct {
	edge   *Edge
	method EdgeMethod
}

// selectEdge applies the five-step edge selection to node's outgoing
// edges. A failed outcome only considers condition edges, and after them
// unconditional edges into a conditional node (isConditional says which
// targets are), which routes the failure on: the spec's step -> diamond ->
// outcome=fail repair idiom. A FAIL never follows an unconditional edge
// into any other node. ok is false when no edge is usable.
func selectEdge(edges []*Edge, o Outcome, vars CondVars, isConditional func(id string) bool) (selection, bool) {
	var matched, unconditional []*Edge
	for _, e := range edges {
		switch {
		case e.Condition == nil:
			unconditional = append(unconditional, e)
		case e.Condition.Eval(vars):
			matched = append(matched, e)
		}
	}
	if o.Status.Custom() {
		return selectCustom(matched, unconditional, o.Status, vars)
	}
	if len(matched) > 0 {
		return selection{bestEdge(matched), ByCondition}, true
	}
	if o.Status == StatusFail {
		unconditional = slices.DeleteFunc(unconditional, func(e *Edge) bool { return !isConditional(e.To) })
		if len(unconditional) == 0 {
			return selection{}, false
		}
		best := bestEdge(unconditional)
		return selection{best, weightOrLexical(unconditional, best)}, true
	}
	if len(unconditional) == 0 {
		return selection{}, false
	}
	if o.PreferredLabel != "" {
		want := normalizeEdgeLabel(o.PreferredLabel)
		for _, e := range unconditional {
			if normalizeEdgeLabel(e.Label) == want {
				return selection{e, ByPreferredLabel}, true
			}
		}
	}
	for _, id := range o.SuggestedNextIDs {
		for _, e := range unconditional {
			if e.To == id {
				return selection{e, BySuggested}, true
			}
		}
	}
	best := bestEdge(unconditional)
	return selection{best, weightOrLexical(unconditional, best)}, true
}

// selectCustom routes a custom outcome: only a condition that names it
// (outcome=VALUE, in the alternative that holds) or an edge labelled with
// it may carry it; anything else (an unconditional edge, outcome!=fail)
// was written for other outcomes.
func selectCustom(matched, unconditional []*Edge, st Status, vars CondVars) (selection, bool) {
	matched = slices.DeleteFunc(matched, func(e *Edge) bool { return !e.Condition.namesHolding(st, vars) })
	if len(matched) > 0 {
		return selection{bestEdge(matched), ByCondition}, true
	}
	for _, e := range unconditional {
		if labelNames(e.Label, st) {
			return selection{e, ByPreferredLabel}, true
		}
	}
	return selection{}, false
}

// labelNames reports whether an edge label names outcome st: "needs_dod",
// "Needs DoD" and "[N] needs dod" all do.
func labelNames(label string, st Status) bool {
	l := normalizeEdgeLabel(label)
	return l != "" && strings.ReplaceAll(l, " ", "_") == string(st)
}

// isConditional reports whether id names a conditional (diamond) node.
func (p *Pipeline) isConditional(id string) bool {
	n := p.Node(id)
	return n != nil && n.Kind == KindConditional
}

// bestEdge picks the highest weight, then the lexically first target.
func bestEdge(edges []*Edge) *Edge {
	best := edges[0]
	for _, e := range edges[1:] {
		if e.Weight > best.Weight || (e.Weight == best.Weight && e.To < best.To) {
			best = e
		}
	}
	return best
}

// weightOrLexical reports whether best won on weight alone or needed the
// lexical tiebreak.
func weightOrLexical(edges []*Edge, best *Edge) EdgeMethod {
	for _, e := range edges {
		if e != best && e.Weight == best.Weight {
			return ByLexical
		}
	}
	return ByWeight
}

// retryTarget returns the first usable retry target for nodes: each one's
// retry_target and fallback_retry_target in turn, then the graph's. A
// target that names no node is skipped, as a fallback exists for exactly
// that case.
func retryTarget(p *Pipeline, nodes ...*Node) string {
	var ts []string
	for _, n := range nodes {
		ts = append(ts, n.RetryTarget, n.FallbackRetryTarget)
	}
	for _, t := range append(ts, p.RetryTarget, p.FallbackRetryTarget) {
		if t != "" && p.Node(t) != nil {
			return t
		}
	}
	return ""
}
