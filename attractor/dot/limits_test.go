package dot

import (
	"strings"
	"testing"
)

// TestPathologicalInputs feeds large hostile inputs; each must end in the
// stated result rather than a stack overflow or a hang.
func TestPathologicalInputs(t *testing.T) {
	const n = 200_000
	tests := []struct {
		name      string
		src       string
		wantErr   string // "" means the graph parses
		wantStmts int    // top-level statements of the parsed graph
	}{
		{name: "deep braces", src: "digraph G {" + strings.Repeat("{", n), wantErr: "ci.dot:1:112: subgraphs nested more than 100 levels deep"},
		{name: "many brackets", src: "digraph G { a " + strings.Repeat("[", n), wantErr: `ci.dot:1:16: expected an attribute key or "]", found "["`},
		{name: "long chain", src: "digraph G { a" + strings.Repeat(" -> a", n) + " }", wantStmts: 1},
		{name: "many statements", src: "digraph G {" + strings.Repeat(" a;", n) + " }", wantStmts: n},
		{name: "long chain cut off", src: "digraph G { a" + strings.Repeat(" -> a", n), wantErr: `ci.dot:1:1000014: expected "}" to close the graph opened at 1:11, found end of file`},
		{name: "many backslashes", src: "digraph G { a [x=\"" + strings.Repeat(`\`, n+1), wantErr: `ci.dot:1:18: unterminated string: no closing quote (") before end of file`},
		{name: "many comment openers", src: "digraph G { " + strings.Repeat("/* ", n), wantErr: `ci.dot:1:13: unterminated block comment: "/*" has no matching "*/"`},
		{name: "many lines", src: "digraph G {" + strings.Repeat("\n", n) + "}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := Parse(testFile, []byte(tt.src))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Parse: %v", err)
			case tt.wantErr == "" && len(g.Stmts) != tt.wantStmts:
				t.Fatalf("got %d statements, want %d", len(g.Stmts), tt.wantStmts)
			case tt.wantErr == "":
			case err == nil:
				t.Fatalf("Parse succeeded, want error %q", tt.wantErr)
			case err.Error() != tt.wantErr:
				t.Errorf("error:\n got %s\nwant %s", err, tt.wantErr)
			}
		})
	}
}
