package dot

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// FuzzParse checks that Parse never panics, that errors are well-formed
// *Error values pointing inside the input, that every position in a
// parsed graph points at its text, and that formatting round-trips.
func FuzzParse(f *testing.F) {
	for _, file := range pipelineFiles(f, "common", "dialect") {
		src, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	// Small inputs around the edges of the grammar.
	for _, s := range []string{
		"",
		"\xEF\xBB\xBFdigraph G {}",
		"digraph G {\r\n a -> b [x=1;y=2,]\r\n}",
		"digraph { a [label=\"x\\\"y\\\\z\\n\\t\\d\"] # c\n /* b */ b // d\n}",
		"digraph G { a -> b -> c [w=1] [v=900s] }",
		"digraph G { subgraph s { node [k=v] { x } } }",
		"digraph G { a.b.c = 250ms; k = -.5; t = true; p = a/b:c-d }",
		"digraph G { a [x=\"unterminated }",
		"digraph G { /* unterminated }",
		"strict digraph G {}",
		"graph G { a -- b }",
		"digraph A {} digraph B {}",
		"digraph G { \"quoted\" }",
		"digraph G { a:p -> b }",
		"digraph G { a [label=<b>] }",
		"digraph G { a [x=] }",
		"digraph G { {{{{{{{{ }}}}}}}} }",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		g, err := Parse(fuzzFile, src)
		if err != nil {
			if g != nil {
				t.Fatalf("Parse returned both a graph and error %v", err)
			}
			checkError(t, fuzzFile, err)
			checkErrorInside(t, src, err)
			return
		}
		checkPositions(t, src, g)
		checkRoundTrip(t, g)
	})
}

// checkErrorInside asserts that an error position is a real place in src:
// on an existing line and at most one column past its end.
func checkErrorInside(t *testing.T, src []byte, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not a *Error", err)
	}
	starts := lineStarts(string(src))
	if e.Pos.Line > len(starts) {
		t.Fatalf("error %v is on line %d of %d", err, e.Pos.Line, len(starts))
	}
	off := starts[e.Pos.Line-1] + e.Pos.Col - 1
	if off > len(src) || strings.Contains(string(src[starts[e.Pos.Line-1]:off]), "\n") {
		t.Fatalf("error %v points past the end of its line", err)
	}
}
