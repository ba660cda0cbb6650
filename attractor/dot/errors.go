package dot

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// errorf returns a *Error at pos.
func errorf(pos Pos, format string, args ...any) error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// describe names a token for "found ..." in messages.
func describe(t token) string {
	switch {
	case t.kind == tEOF:
		return "end of file"
	case t.kind == tString || t.kind == tValue && t.vkind == StringValue:
		return "string " + excerpt(t.raw)
	case t.kind == tIdent && isKeyword(t.raw):
		return fmt.Sprintf("keyword %q", t.raw)
	}
	return fmt.Sprintf("%q", excerpt(t.raw))
}

// excerpt shortens s to its first line and at most 40 bytes, so that a
// long multi-line prompt does not swamp the message.
func excerpt(s string) string {
	const max = 40
	cut := len(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		cut = i
	}
	if cut > max {
		cut = max
	}
	if cut == len(s) {
		return s
	}
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// isKeyword reports whether s is one of DOT's reserved words, which DOT
// matches case-insensitively: Graphviz reads `Node [..]` as node defaults.
func isKeyword(s string) bool {
	switch len(s) {
	case 4:
		return strings.EqualFold(s, "node") || strings.EqualFold(s, "edge")
	case 5:
		return strings.EqualFold(s, "graph")
	case 6:
		return strings.EqualFold(s, "strict")
	case 7:
		return strings.EqualFold(s, "digraph")
	case 8:
		return strings.EqualFold(s, "subgraph")
	}
	return false
}

// bareIDHint tells users what to write instead of a non-bare node ID.
const bareIDHint = `node IDs must be bare identifiers ([A-Za-z_][A-Za-z0-9_]*); use an ID like run_tests and put display text in label="..."`

// htmlHint rejects Graphviz HTML strings, which Attractor has no use for.
const htmlHint = `HTML labels (<...>) are not supported: use a quoted string, e.g. label="..."`
