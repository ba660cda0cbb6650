package attractor

import (
	"fmt"
	"strings"
)

// ConditionError is a condition that does not parse. Offset is the byte
// offset in the condition text of the offending part, so Load can point
// into the attribute value.
type ConditionError struct {
	Offset int
	Msg    string
	Fix    string
}

func (e *ConditionError) Error() string { return e.Msg }

// ParseCondition parses an edge condition: clauses `key = literal`,
// `key != literal` or a bare key, joined by &&. Keys are outcome,
// preferred_label and context.PATH; quoted literals are unquoted and
// outcome literals canonicalised (ok → success, failure → fail, ...).
// An empty or blank condition returns nil: the edge is unconditional.
// Any error is a *ConditionError.
func ParseCondition(src string) (*Condition, error) {
	if strings.TrimSpace(src) == "" {
		return nil, nil
	}
	c := &Condition{Source: src}
	for lo := 0; ; {
		hi := indexOutsideQuotes(src, lo, "&&")
		cl, err := parseClause(src, lo, hi)
		if err != nil {
			return nil, err
		}
		c.Clauses = append(c.Clauses, cl)
		if hi == len(src) {
			return c, nil
		}
		lo = hi + 2
	}
}

// indexOutsideQuotes returns the index of sep in s[from:] that is not
// inside a quoted literal, or len(s).
func indexOutsideQuotes(s string, from int, sep string) int {
	quoted := false
	for i := from; i < len(s); i++ {
		switch {
		case quoted && s[i] == '\\':
			i++
		case s[i] == '"':
			quoted = !quoted
		case !quoted && strings.HasPrefix(s[i:], sep):
			return i
		}
	}
	return len(s)
}

// span is a trimmed piece of the condition with its offset.
type span struct {
	text string
	off  int
}

func trimSpan(s string, lo, hi int) span {
	for lo < hi && isSpace(s[lo]) {
		lo++
	}
	for hi > lo && isSpace(s[hi-1]) {
		hi--
	}
	return span{s[lo:hi], lo}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func condErr(off int, fix, format string, args ...any) error {
	return &ConditionError{Offset: off, Msg: fmt.Sprintf(format, args...), Fix: fix}
}

const condFix = `write clauses like outcome=success, preferred_label="Fix", context.tests_passed=true, joined by &&`

func parseClause(src string, lo, hi int) (Clause, error) {
	cl := trimSpan(src, lo, hi)
	if cl.text == "" {
		return Clause{}, condErr(lo, "remove the extra && or add a clause", "empty clause in condition %q", src)
	}
	if i := indexOutsideQuotes(cl.text, 0, "||"); i < len(cl.text) {
		return Clause{}, condErr(cl.off+i, "conditions have no OR: use one edge per alternative", "unsupported operator \"||\" in condition")
	}
	opAt, op := findOp(cl.text)
	if opAt < 0 {
		return bareClause(cl)
	}
	switch op {
	case "==":
		return Clause{}, condErr(cl.off+opAt, "write = instead of ==", "unsupported operator \"==\" in condition")
	case "<", ">", "!":
		return Clause{}, condErr(cl.off+opAt, "only = and != compare values; && joins clauses", "unsupported operator %q in condition", op)
	}
	key := trimSpan(cl.text, 0, opAt)
	key.off += cl.off
	if err := checkKey(key); err != nil {
		return Clause{}, err
	}
	lit := trimSpan(cl.text, opAt+len(op), len(cl.text))
	lit.off += cl.off
	val, err := parseLiteral(lit, key.text)
	if err != nil {
		return Clause{}, err
	}
	return Clause{Key: key.text, Op: Op(op), Value: val}, nil
}

// findOp finds the first comparison operator outside quotes: "!=", "=="
// or "=". Relational operators are reported as unsupported.
func findOp(s string) (int, string) {
	quoted := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case quoted:
		case strings.HasPrefix(s[i:], "!="):
			return i, "!="
		case strings.HasPrefix(s[i:], "=="):
			return i, "=="
		case c == '=':
			return i, "="
		case c == '<' || c == '>' || c == '!':
			return i, string(c)
		}
	}
	return -1, ""
}

// bareClause is a key alone, true when its value is non-empty and not
// "false" or "0". A bare outcome alias ("success") is the common mistake.
func bareClause(cl span) (Clause, error) {
	if st, ok := canonicalOutcome(cl.text); ok {
		return Clause{}, condErr(cl.off, fmt.Sprintf("write outcome=%s", st), "clause %q has no operator", cl.text)
	}
	if err := checkKey(cl); err != nil {
		return Clause{}, err
	}
	return Clause{Key: cl.text, Op: OpTruthy}, nil
}

func checkKey(k span) error {
	switch {
	case k.text == "outcome", k.text == "preferred_label":
		return nil
	case strings.HasPrefix(k.text, "context."):
		if isPath(k.text[len("context."):]) {
			return nil
		}
		return condErr(k.off, "context keys are dotted identifiers like context.tests_passed", "invalid context key %q in condition", k.text)
	case k.text == "":
		return condErr(k.off, condFix, "missing key before the operator")
	case strings.ContainsAny(k.text, "<>!"):
		return condErr(k.off, "only = and != compare values", "unsupported operator in %q", k.text)
	}
	if s := suggest(k.text, []string{"outcome", "preferred_label"}); s != "" {
		return condErr(k.off, fmt.Sprintf("did you mean %q?", s), "unknown key %q in condition", k.text)
	}
	if isPath(k.text) {
		return nil // an unqualified context key; Load warns (condition_context_key)
	}
	return condErr(k.off, "use outcome, preferred_label or context.KEY", "unknown key %q in condition", k.text)
}

// isPath reports whether s is Identifier ('.' Identifier)*.
func isPath(s string) bool {
	for _, part := range strings.Split(s, ".") {
		if !isIdent(part) {
			return false
		}
	}
	return true
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && isDigit(c)) {
			return false
		}
	}
	return true
}

// parseLiteral unquotes a literal; for the outcome key it canonicalises
// the status so that conditions compare against one spelling. An outcome
// that is no status but an identifier is a custom outcome, lower-cased as
// ParseStatus lower-cases what status files write.
func parseLiteral(lit span, key string) (string, error) {
	val, err := unquoteLiteral(lit)
	if err != nil || key != "outcome" {
		return val, err
	}
	st, ok := ParseStatus(val)
	if !ok {
		fix := "outcome is one of success, partial_success, retry, fail, skipped, or a custom outcome spelled as an identifier such as needs_fix"
		if s := suggest(strings.ToLower(val), outcomeSpellings()); s != "" {
			fix = fmt.Sprintf("did you mean %q?", s)
		}
		return "", condErr(lit.off, fix, "outcome is never %q", val)
	}
	return string(st), nil
}

func unquoteLiteral(lit span) (string, error) {
	s := lit.text
	if s == "" {
		return "", condErr(lit.off, `write "" to compare with the empty string`, "missing value after the operator")
	}
	if s[0] == '"' {
		end := closingQuote(s)
		if end < 0 {
			return "", condErr(lit.off, `add the closing "`, "unterminated quoted value %s", s)
		}
		if end != len(s)-1 {
			return "", condErr(lit.off+end+1, "quote the whole value", "unexpected %q after the quoted value", s[end+1:])
		}
		return strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace(s[1:end]), nil
	}
	for i := 0; i < len(s); i++ {
		if !isBareLiteralByte(s[i]) {
			return "", condErr(lit.off+i, fmt.Sprintf("quote the value: %q", s), "unexpected %q in value %q", s[i:i+1], s)
		}
	}
	return s, nil
}

// closingQuote returns the index of the quote closing the one at s[0],
// skipping escaped bytes, or -1.
func closingQuote(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

func isBareLiteralByte(c byte) bool {
	return c == '_' || c == '.' || c == ':' || c == '-' || isDigit(c) ||
		'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// canonicalOutcome maps an outcome spelling (any case) to its Status.
func canonicalOutcome(s string) (Status, bool) {
	switch strings.ToLower(s) {
	case "success", "ok", "succeeded", "pass", "passed":
		return StatusSuccess, true
	case "fail", "failure", "failed", "error":
		return StatusFail, true
	case "skipped", "skip":
		return StatusSkipped, true
	case "partial_success", "partial":
		return StatusPartialSuccess, true
	case "retry":
		return StatusRetry, true
	}
	return "", false
}

func outcomeSpellings() []string {
	return []string{"success", "ok", "succeeded", "pass", "passed", "fail", "failure", "failed", "error",
		"skipped", "skip", "partial_success", "partial", "retry"}
}

// CanMatch reports whether c can hold when the outcome is s: every
// outcome clause must agree with s; other clauses depend on run-time
// values and are assumed satisfiable. A nil condition matches anything.
func (c *Condition) CanMatch(s Status) bool {
	if c == nil {
		return true
	}
	for _, cl := range c.Clauses {
		if cl.Key != "outcome" {
			continue
		}
		switch cl.Op {
		case OpEq:
			if cl.Value != string(s) {
				return false
			}
		case OpNe:
			if cl.Value == string(s) {
				return false
			}
		}
	}
	return true
}

// Names reports whether c has a clause outcome=s.
func (c *Condition) Names(s Status) bool {
	if c == nil {
		return false
	}
	for _, cl := range c.Clauses {
		if cl.Key == "outcome" && cl.Op == OpEq && cl.Value == string(s) {
			return true
		}
	}
	return false
}

// HasKey reports whether any clause tests key.
func (c *Condition) HasKey(key string) bool {
	if c == nil {
		return false
	}
	for _, cl := range c.Clauses {
		if cl.Key == key {
			return true
		}
	}
	return false
}
