package dot

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const (
	testFile = "ci.dot"
	fuzzFile = "fuzz.dot"
)

func at(line, col int) Pos { return Pos{File: testFile, Line: line, Col: col} }

func ident(name string, line, col int) Ident { return Ident{Name: name, Pos: at(line, col)} }

// kv builds an attribute whose value is bare text (Text == Raw).
func kv(key string, line, col int, kind ValueKind, raw string, vline, vcol int) Attr {
	return Attr{Key: key, KeyPos: at(line, col), Value: Value{Kind: kind, Text: raw, Raw: raw, Pos: at(vline, vcol)}}
}

// kvs builds a string attribute with decoded text.
func kvs(key string, line, col int, text, raw string, vline, vcol int) Attr {
	return Attr{Key: key, KeyPos: at(line, col), Value: Value{Kind: StringValue, Text: text, Raw: raw, Pos: at(vline, vcol)}}
}

// mustParse parses src and fails the test on error.
func mustParse(t testing.TB, src string) *Graph {
	t.Helper()
	g, err := Parse(testFile, []byte(src))
	if err != nil {
		t.Fatalf("Parse: %v\nsource:\n%s", err, src)
	}
	return g
}

// ignorePos compares graphs as written, wherever they came from.
var ignorePos = cmpopts.IgnoreTypes(Pos{})

// checkRoundTrip asserts that formatting g and parsing the result gives
// g back (source spelling aside), and that formatting is idempotent.
func checkRoundTrip(t testing.TB, g *Graph) {
	t.Helper()
	out := Format(g)
	again, err := Parse("formatted.dot", out)
	if err != nil {
		t.Fatalf("re-parsing formatted graph: %v\nformatted:\n%s", err, out)
	}
	if diff := cmp.Diff(again, g, ignorePos, cmpopts.IgnoreFields(Value{}, "Raw")); diff != "" {
		t.Fatalf("round trip (-got +want):\n%s\nformatted:\n%s", diff, out)
	}
	if diff := cmp.Diff(string(Format(again)), string(out)); diff != "" {
		t.Fatalf("formatting is not idempotent (-got +want):\n%s", diff)
	}
}

// checkPositions asserts that every position in g points at the text it
// belongs to in src, which pins Line and Col without writing them out.
func checkPositions(t testing.TB, src []byte, g *Graph) {
	t.Helper()
	pc := posChecker{t: t, src: string(src), starts: lineStarts(string(src))}
	pc.at(g.Pos, "digraph")
	if g.IDPos.IsValid() {
		pc.atID(g.IDPos, g.ID)
	}
	pc.stmts(g.Stmts)
}

type posChecker struct {
	t      testing.TB
	src    string
	starts []int
}

// lineStarts returns the offset of each line's first column; a leading
// BOM takes no column.
func lineStarts(src string) []int {
	starts := []int{0}
	if strings.HasPrefix(src, utf8BOM) {
		starts[0] = len(utf8BOM)
	}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// at asserts that the source at p starts with one of wants.
func (pc posChecker) at(p Pos, wants ...string) {
	pc.t.Helper()
	if p.File != testFile && p.File != fuzzFile || p.Line < 1 || p.Line > len(pc.starts) || p.Col < 1 {
		pc.t.Fatalf("position %v of %q is outside the source", p, wants)
	}
	off := min(pc.starts[p.Line-1]+p.Col-1, len(pc.src))
	for _, want := range wants {
		if strings.HasPrefix(pc.src[off:], want) {
			return
		}
	}
	pc.t.Fatalf("position %v: source there is %q, want it to start with one of %q", p, excerpt(pc.src[off:]), wants)
}

// atID accepts the name bare or quoted.
func (pc posChecker) atID(p Pos, id string) {
	pc.t.Helper()
	pc.at(p, id, `"`)
}

func (pc posChecker) stmts(stmts []Stmt) {
	pc.t.Helper()
	for _, s := range stmts {
		switch s := s.(type) {
		case *AttrStmt:
			pc.at(s.Pos, string(s.Kind))
			pc.attrs(s.Attrs)
		case *AssignStmt:
			pc.attrs([]Attr{s.Attr})
		case *NodeStmt:
			pc.at(s.ID.Pos, s.ID.Name)
			pc.attrs(s.Attrs)
		case *EdgeStmt:
			for _, id := range s.Nodes {
				pc.at(id.Pos, id.Name)
			}
			pc.attrs(s.Attrs)
		case *Subgraph:
			pc.at(s.Pos, "subgraph", "{")
			pc.stmts(s.Stmts)
		default:
			pc.t.Fatalf("unexpected statement type %T", s)
		}
	}
}

func (pc posChecker) attrs(attrs []Attr) {
	pc.t.Helper()
	for _, a := range attrs {
		pc.at(a.KeyPos, a.Key)
		pc.at(a.Value.Pos, a.Value.Raw)
	}
}

// checkError asserts that err is a *Error for file with a well-formed
// position and message.
func checkError(t testing.TB, file string, err error) {
	t.Helper()
	e, ok := err.(*Error)
	if !ok {
		t.Fatalf("error %v is %T, want *Error", err, err)
	}
	if e.Pos.File != file || e.Pos.Line < 1 || e.Pos.Col < 1 || e.Msg == "" {
		t.Fatalf("malformed error %#v", e)
	}
	if want := fmt.Sprintf("%s:%d:%d: ", file, e.Pos.Line, e.Pos.Col); !strings.HasPrefix(e.Error(), want) {
		t.Fatalf("error %q does not start with %q", e.Error(), want)
	}
}
