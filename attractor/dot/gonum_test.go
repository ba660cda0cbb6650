package dot

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	gdot "gonum.org/v1/gonum/graph/formats/dot"
	gast "gonum.org/v1/gonum/graph/formats/dot/ast"
)

// The common subset with gonum's Graphviz-grammar parser, found by trying
// it: both accept //, /* */ and # comments (gonum takes # anywhere, like
// this package), optional ";", "," or ";" between attributes, trailing
// separators, several [..] lists, CRLF, numbers like -1 and .5, booleans
// and quoted strings. gonum rejects qualified keys (a.b), bare durations
// (900s), bare values with . : / or - (verify.artifacts, a/b) and a
// leading BOM. TestGonumRejectsExtensions pins that boundary.

// gonumCases are inline pipelines in the common subset; the files under
// testdata/common are compared as well.
func gonumCases() map[string]string {
	return map[string]string{
		"chains and implicit nodes": "digraph G { a -> b -> c -> d; d -> a [label=\"back\"] }",
		"comments": "// c\n# hash line\ndigraph G { /* x */ a -> b # trailing\n" +
			" c // end\n}",
		"CRLF and separators":  "digraph G {\r\n  a [x=1; y=2,]\r\n  a -> b [w=1] [v=-2, u=.5]\r\n}\r\n",
		"nested subgraphs":     "digraph G { subgraph s { node [k=v] subgraph t { a -> b } { c } } subgraph { d -> a } }",
		"defaults and assigns": "digraph G { graph [rankdir=LR] node [shape=box] edge [weight=1] goal=\"g\" x -> y }",
		"keyword-like IDs":     "digraph G { nodes -> edges -> graphs; subgraphs }",
		"strings with escapes": "digraph G { a [prompt=\"say \\\"hi\\\"\\n# not a comment\"] a -> b }",
		"self loop":            "digraph G { a -> a }",
		"generated":            string(genPipeline(200, 600)),
	}
}

func TestGonumAgrees(t *testing.T) {
	inputs := gonumCases()
	for _, file := range pipelineFiles(t, "common") {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		inputs[file] = string(src)
	}
	for name, src := range inputs {
		t.Run(name, func(t *testing.T) {
			theirs, err := gdot.ParseString(src)
			if err != nil {
				t.Fatalf("gonum rejects a pipeline meant to be in the common subset: %v", err)
			}
			if len(theirs.Graphs) != 1 {
				t.Fatalf("gonum found %d graphs, want 1", len(theirs.Graphs))
			}
			var want shape
			want.gonumStmts(t, theirs.Graphs[0].Stmts)
			if len(want.Nodes) == 0 {
				t.Fatal("gonum found no nodes; the comparison would be vacuous")
			}
			var got shape
			got.stmts(mustParse(t, src).Stmts)
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("nodes and edges (-got +want):\n%s", diff)
			}
		})
	}
}

func TestGonumRejectsExtensions(t *testing.T) {
	for _, src := range []string{
		"digraph G { a [retry.max=1] }",
		"digraph G { a [timeout=900s] }",
		"digraph G { a [type=verify.artifacts] }",
		"digraph G { a [dir=a/b] }",
		"\xEF\xBB\xBFdigraph G { a }",
	} {
		mustParse(t, src)
		if _, err := gdot.ParseString(src); err == nil {
			t.Errorf("gonum accepts %q: widen the common subset in gonumCases", src)
		}
	}
}

// shape is what both parsers must agree on: node IDs, edges declared
// by chains, and nodes that only edges mention.
type shape struct {
	Nodes map[string]bool
	Edges map[[2]string]bool
}

func (s *shape) node(id string) {
	if s.Nodes == nil {
		s.Nodes, s.Edges = map[string]bool{}, map[[2]string]bool{}
	}
	s.Nodes[id] = true
}

func (s *shape) edge(from, to string) {
	s.node(from)
	s.node(to)
	s.Edges[[2]string{from, to}] = true
}

func (s *shape) stmts(stmts []Stmt) {
	for _, st := range stmts {
		switch st := st.(type) {
		case *NodeStmt:
			s.node(st.ID.Name)
		case *EdgeStmt:
			for i := 1; i < len(st.Nodes); i++ {
				s.edge(st.Nodes[i-1].Name, st.Nodes[i].Name)
			}
		case *Subgraph:
			s.stmts(st.Stmts)
		}
	}
}

func (s *shape) gonumStmts(t *testing.T, stmts []gast.Stmt) {
	for _, st := range stmts {
		switch st := st.(type) {
		case *gast.NodeStmt:
			s.node(st.Node.ID)
		case *gast.EdgeStmt:
			from := gonumNode(t, st.From)
			for e := st.To; e != nil; e = e.To {
				to := gonumNode(t, e.Vertex)
				s.edge(from, to)
				from = to
			}
		case *gast.Subgraph:
			s.gonumStmts(t, st.Stmts)
		}
	}
}

// gonumNode returns the ID of an edge endpoint; the common subset has no
// subgraph endpoints.
func gonumNode(t *testing.T, v gast.Vertex) string {
	n, ok := v.(*gast.Node)
	if !ok {
		t.Fatalf("gonum edge endpoint %v is a %T, not a node", v, v)
	}
	return n.ID
}
