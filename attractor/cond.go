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
// `key != literal`, `key contains literal` or a bare key, each optionally
// negated with a leading !, joined by && and then by || (&& binds
// tighter). Keys are outcome, preferred_label and context.PATH; quoted
// literals are unquoted and outcome literals canonicalised (ok → success,
// failure → fail, ...). ||, ! and contains are Fabro's and
// attractor-kotlin's extensions of the spec's language; Notes records
// them, and Fabro's outcome spellings, for Load to warn about. An empty
// or blank condition returns nil: the edge is unconditional. Any error is
// a *ConditionError.
func ParseCondition(src string) (*Condition, error) {
	if strings.TrimSpace(src) == "" {
		return nil, nil
	}
	c := &Condition{Source: src}
	ps := &condParser{c: c}
	for lo := 0; ; {
		hi := indexOutsideQuotes(src, lo, "||")
		if hi < len(src) && len(c.Any) == 0 {
			ps.note(hi, "|| is Fabro's extension of the condition language: read as or, with && binding tighter",
				"keep it, or write one edge per alternative so other engines read it too")
		}
		all, err := ps.parseAll(src, lo, hi)
		if err != nil {
			return nil, err
		}
		c.Any = append(c.Any, all)
		if hi == len(src) {
			return c, nil
		}
		lo = hi + 2
	}
}

// condParser parses one condition; it notes each extension once.
type condParser struct {
	c                  *Condition
	notedNot, notedHas bool
}

// parseAll parses the clauses joined by && in src[lo:hi].
func (c *condParser) parseAll(src string, lo, hi int) ([]Clause, error) {
	var all []Clause
	for {
		end := indexOutsideQuotes(src[:hi], lo, "&&")
		cl, err := c.parseClause(src, lo, end)
		if err != nil {
			return nil, err
		}
		all = append(all, cl)
		if end == hi {
			return all, nil
		}
		lo = end + 2
	}
}

func (c *condParser) note(off int, msg, fix string) {
	c.c.Notes = append(c.c.Notes, ConditionNote{Offset: off, Msg: msg, Fix: fix})
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

func (c *condParser) parseClause(src string, lo, hi int) (Clause, error) {
	cl := trimSpan(src, lo, hi)
	if cl.text == "" {
		return Clause{}, condErr(lo, fmt.Sprintf("remove the extra %s or add a clause", adjacentOp(src, lo, hi)), "empty clause in condition %q", src)
	}
	neg := false
	for strings.HasPrefix(cl.text, "!") && !strings.HasPrefix(cl.text, "!=") {
		if !c.notedNot {
			c.notedNot = true
			c.note(cl.off, "! is Fabro's extension of the condition language: read as not",
				"keep it, or write the negated operator (outcome!=success) so other engines read it too")
		}
		neg = !neg
		cl = trimSpan(src, cl.off+1, hi)
	}
	if st, ok := canonicalOutcome(cl.text); ok && neg {
		return Clause{}, condErr(cl.off, fmt.Sprintf("write outcome!=%s", st), "clause %q has no operator", cl.text)
	}
	out, err := c.parsePositive(cl)
	if err != nil || !neg {
		return out, err
	}
	return out.negated(), nil
}

// adjacentOp names the operator next to the empty clause src[lo:hi].
func adjacentOp(src string, lo, hi int) string {
	if hi+2 <= len(src) && src[hi:hi+2] == "||" || hi == len(src) && lo >= 2 && src[lo-2:lo] == "||" {
		return "||"
	}
	return "&&"
}

// negated returns the clause that holds exactly when cl does not.
func (cl Clause) negated() Clause {
	switch cl.Op {
	case OpEq:
		cl.Op = OpNe
	case OpNe:
		cl.Op = OpEq
	case OpTruthy:
		cl.Op = OpFalsy
	case OpFalsy:
		cl.Op = OpTruthy
	case OpContains:
		cl.Op = OpNotContains
	case OpNotContains:
		cl.Op = OpContains
	}
	return cl
}

// parsePositive parses a clause without a leading !.
func (c *condParser) parsePositive(cl span) (Clause, error) {
	if strings.HasPrefix(cl.text, "(") {
		return Clause{}, condErr(cl.off, "write alternatives of && clauses, a && b || c (&& binds tighter), or one edge per alternative",
			"parentheses are not supported in conditions")
	}
	if word, at := wordOp(cl.text); word != "" {
		return c.wordClause(cl, word, at)
	}
	opAt, op := findOp(cl.text)
	if opAt < 0 {
		return bareClause(cl)
	}
	switch op {
	case "==":
		return Clause{}, condErr(cl.off+opAt, "write = instead of ==", "unsupported operator \"==\" in condition")
	case "!":
		return Clause{}, condErr(cl.off+opAt, "! negates a whole clause: write !KEY=VALUE, or KEY!=VALUE", "unexpected \"!\" inside a clause")
	case "<", ">":
		return Clause{}, condErr(cl.off+opAt, relationalFix, "unsupported operator %q in condition: Fabro's numeric comparisons are not part of this dialect", op)
	}
	key := trimSpan(cl.text, 0, opAt)
	key.off += cl.off
	if err := checkKey(key); err != nil {
		return Clause{}, err
	}
	lit := trimSpan(cl.text, opAt+len(op), len(cl.text))
	lit.off += cl.off
	val, err := c.parseLiteral(lit, key.text)
	if err != nil {
		return Clause{}, err
	}
	return Clause{Key: key.text, Op: Op(op), Value: val}, nil
}

const relationalFix = "compare with =, != or contains: have the step write its verdict (context.score_ok=true, or a custom outcome) and test that"

// wordOp finds a word operator after the key: contains, !contains (both
// read) or matches (refused), with the byte offset where it starts.
func wordOp(s string) (string, int) {
	i := strings.IndexAny(s, " \t")
	if i < 0 || strings.ContainsAny(s[:i], "=\"") {
		return "", -1
	}
	rest := strings.TrimLeft(s[i:], " \t")
	at := len(s) - len(rest)
	for _, w := range []string{"contains", "!contains", "matches"} {
		if r, ok := strings.CutPrefix(rest, w); ok && (r == "" || isSpace(r[0]) || r[0] == '"') {
			return w, at
		}
	}
	return "", -1
}

// wordClause parses `key contains literal` (Fabro, attractor-kotlin) and
// `key !contains literal` (attractor-kotlin), and refuses Fabro's
// regular-expression `matches`.
func (c *condParser) wordClause(cl span, word string, at int) (Clause, error) {
	if word == "matches" {
		return Clause{}, condErr(cl.off+at, relationalFix, "unsupported operator \"matches\" in condition: Fabro's regular-expression match is not part of this dialect")
	}
	key := trimSpan(cl.text, 0, at)
	key.off += cl.off
	if err := checkKey(key); err != nil {
		return Clause{}, err
	}
	lit := trimSpan(cl.text, at+len(word), len(cl.text))
	lit.off += cl.off
	val, err := unquoteLiteral(lit)
	if err != nil {
		return Clause{}, err
	}
	if !c.notedHas {
		c.notedHas = true
		c.note(cl.off+at, fmt.Sprintf("%s is Fabro's and attractor-kotlin's extension of the condition language: read as a substring test (or membership, for a JSON array value)", word),
			"keep it, or have the step write the verdict (context.KEY=true) so other engines read it too")
	}
	return Clause{Key: key.text, Op: Op(word), Value: val}, nil
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
func (c *condParser) parseLiteral(lit span, key string) (string, error) {
	val, err := unquoteLiteral(lit)
	if err != nil || key != "outcome" {
		return val, err
	}
	if st, ok := fabroOutcome(val); ok {
		c.note(lit.off, fmt.Sprintf("outcome %q is Fabro's spelling of %s: read as %s", val, st, st), fmt.Sprintf("write outcome=%s", st))
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
	case "partial_success", "partial", "partially_succeeded":
		return StatusPartialSuccess, true
	case "retry":
		return StatusRetry, true
	}
	return "", false
}

func outcomeSpellings() []string {
	return []string{"success", "ok", "succeeded", "pass", "passed", "fail", "failure", "failed", "error",
		"skipped", "skip", "partial_success", "partial", "partially_succeeded", "retry"}
}

// fabroOutcome reports Fabro's spellings of the statuses (succeeded,
// failed, partially_succeeded) and the status each means.
func fabroOutcome(s string) (Status, bool) {
	switch strings.ToLower(s) {
	case "succeeded":
		return StatusSuccess, true
	case "failed":
		return StatusFail, true
	case "partially_succeeded":
		return StatusPartialSuccess, true
	}
	return "", false
}

// CanMatch reports whether c can hold when the outcome is s: some
// alternative's outcome clauses all agree with s; other clauses depend on
// run-time values and are assumed satisfiable. A nil condition matches
// anything.
func (c *Condition) CanMatch(s Status) bool {
	if c == nil {
		return true
	}
	for _, all := range c.Any {
		if allCanMatch(all, s) {
			return true
		}
	}
	return false
}

func allCanMatch(all []Clause, s Status) bool {
	for _, cl := range all {
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

// namesOutcome reports whether all has the clause outcome=s.
func namesOutcome(all []Clause, s Status) bool {
	for _, cl := range all {
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
	for _, all := range c.Any {
		for _, cl := range all {
			if cl.Key == key {
				return true
			}
		}
	}
	return false
}
