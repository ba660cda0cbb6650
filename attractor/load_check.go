package attractor

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor/dot"
)

// check looks at attributes as written, once each: names, typed values,
// bare durations and conditions. Conditions are parsed here, once, and
// shared by every edge the statement or default reaches. It returns the
// attributes with other engines' spellings renamed to ours.
func (b *builder) check(w attrWhere, attrs []dot.Attr) []dot.Attr {
	for _, a := range attrs {
		b.checkAttrKey(w, a)
		if f, ok := b.names.foreign[a.Key]; ok && f.ours != "" {
			b.aliased[a.KeyPos] = a.Key
			a.Key = f.ours // typed as ours
		}
		if te := checkValue(a.Key, a.Value); te != nil {
			b.r.at(RuleAttrType, a.Value.Pos, te.msg, te.fix)
		}
		if a.Value.Kind == dot.DurationValue {
			b.r.at(RuleDurationUnrenderable, a.Value.Pos,
				fmt.Sprintf("bare duration %s: Graphviz cannot read this file to draw it", a.Value.Raw),
				fmt.Sprintf("quote it: %s=%q", a.Key, a.Value.Text))
		}
		if _, ok := bareSeconds(a.Value.Text); ok && attrTypeOf(a.Key) == typeDuration {
			b.r.at(RuleDurationUnit, a.Value.Pos,
				fmt.Sprintf("%s=%s has no unit: read as %ss (seconds, as Kilroy reads it)", a.Key, a.Value.Raw, a.Value.Text),
				fmt.Sprintf("write %s=\"%ss\"", a.Key, a.Value.Text))
		}
		if a.Key == "condition" {
			b.condition(a.Value)
		}
		b.dialectValue(w, a)
	}
	return b.names.canonical(attrs)
}

func (b *builder) condition(v dot.Value) {
	c, err := ParseCondition(v.Text)
	var ce *ConditionError
	if errors.As(err, &ce) {
		b.r.at(RuleConditionSyntax, posIn(v, ce.Offset), ce.Msg, ce.Fix)
		return
	}
	b.conds[v.Pos] = c
	// Clauses come in source order: each is looked for after the one
	// before, and cur places them in one pass over the value.
	cur, lo := newPosCursor(v), 0
	for _, all := range c.Any {
		for _, cl := range all {
			lo = b.conditionClause(cur, v.Text, lo, cl)
		}
	}
	for _, n := range c.Notes {
		b.r.at(RuleDialectAlias, posIn(v, n.Offset), n.Msg, n.Fix)
	}
}

// conditionClause warns about a clause that parses but may not say what
// its author meant: an unqualified context key, or a custom outcome that
// looks like a misspelt status. Its text is looked for from offset lo of
// text; it returns where the next clause's search starts.
func (b *builder) conditionClause(cur *posCursor, text string, lo int, cl Clause) int {
	// The clause starts at its key; the next clause is looked for after it.
	key, next := lo, lo
	if i := strings.Index(text[lo:], cl.Key); i >= 0 {
		key, next = lo+i, lo+i+len(cl.Key)
	}
	at := func(s string) dot.Pos {
		if i := strings.Index(text[key:], s); i >= 0 {
			return cur.at(key + i)
		}
		return cur.at(key)
	}
	switch {
	case cl.Key != "outcome" && cl.Key != "preferred_label" && !strings.HasPrefix(cl.Key, "context."):
		b.r.at(RuleConditionContextKey, at(cl.Key),
			fmt.Sprintf("condition key %q is read from the run context, as context.%s", cl.Key, cl.Key),
			fmt.Sprintf("write context.%s", cl.Key))
	case cl.Key == "outcome" && Status(cl.Value).Custom():
		if s := suggest(cl.Value, outcomeSpellings()); s != "" {
			b.r.at(RuleOutcomeCustom, at(cl.Value),
				fmt.Sprintf("outcome %q is not a status: it is read as a custom outcome, which only a status file writes", cl.Value),
				fmt.Sprintf("did you mean %q?", s))
		}
	}
	return next
}

// stylesheet parses the graph's model_stylesheet and places its rules in
// the source.
func (b *builder) stylesheet() {
	a, ok := b.p.Attrs["model_stylesheet"]
	if !ok {
		return
	}
	rules, err := ParseStylesheet(a.Value.Text)
	var se *StylesheetError
	if errors.As(err, &se) {
		b.r.at(RuleStylesheetSyntax, posIn(a.Value, se.Offset), se.Msg, se.Fix)
		return
	}
	cur := newPosCursor(a.Value) // rules and declarations come in source order
	for i := range rules {
		rules[i].Pos = cur.at(rules[i].Offset)
		for j := range rules[i].Decls {
			d := &rules[i].Decls[j]
			d.Pos = cur.at(d.Offset)
			if d.Alias != "" {
				b.r.at(RuleDialectAlias, d.Pos, fmt.Sprintf("stylesheet property %s is Fabro's name for %s: read as %s", d.Alias, d.Property, d.Property),
					fmt.Sprintf("write %s:", d.Property))
			}
		}
	}
	b.p.Stylesheet = rules
}
