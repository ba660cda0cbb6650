package dot

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want *Graph
	}{
		{
			name: "empty graph",
			src:  "digraph G {}",
			want: &Graph{Pos: at(1, 1), ID: "G", IDPos: at(1, 9)},
		},
		{
			name: "anonymous graph",
			src:  "  digraph {\n}\n",
			want: &Graph{Pos: at(1, 3)},
		},
		{
			name: "quoted graph ID",
			src:  `digraph "my \"ci\"" {}`,
			want: &Graph{Pos: at(1, 1), ID: `my "ci"`, IDPos: at(1, 9)},
		},
		{
			name: "defaults and top-level assignments",
			src: "digraph G {\n" +
				"\tgraph [goal=\"ship it\", rankdir=LR]\n" +
				"\tnode [shape=box]\n" +
				"\tedge [weight=0];\n" +
				"\tdefault_max_retries = 2\n" +
				"}\n",
			want: &Graph{Pos: at(1, 1), ID: "G", IDPos: at(1, 9), Stmts: []Stmt{
				&AttrStmt{Pos: at(2, 2), Kind: GraphAttrs, Attrs: []Attr{
					kvs("goal", 2, 9, "ship it", `"ship it"`, 2, 14),
					kv("rankdir", 2, 25, BareValue, "LR", 2, 33),
				}},
				&AttrStmt{Pos: at(3, 2), Kind: NodeAttrs, Attrs: []Attr{kv("shape", 3, 8, BareValue, "box", 3, 14)}},
				&AttrStmt{Pos: at(4, 2), Kind: EdgeAttrs, Attrs: []Attr{kv("weight", 4, 8, NumberValue, "0", 4, 15)}},
				&AssignStmt{Attr: kv("default_max_retries", 5, 2, NumberValue, "2", 5, 24)},
			}},
		},
		{
			name: "chained edge with attributes in two lists",
			src:  "digraph G {\n  a -> b->c [label=\"next\", weight=2] [loop_restart=true]\n}",
			want: &Graph{Pos: at(1, 1), ID: "G", IDPos: at(1, 9), Stmts: []Stmt{
				&EdgeStmt{
					Nodes: []Ident{ident("a", 2, 3), ident("b", 2, 8), ident("c", 2, 11)},
					Attrs: []Attr{
						kvs("label", 2, 14, "next", `"next"`, 2, 20),
						kv("weight", 2, 28, NumberValue, "2", 2, 35),
						kv("loop_restart", 2, 39, BoolValue, "true", 2, 52),
					},
				},
			}},
		},
		{
			name: "node statements, optional and doubled semicolons, empty list",
			src:  "digraph G { ;a; b [] ;; c [x=1;y=2,] }",
			want: &Graph{Pos: at(1, 1), ID: "G", IDPos: at(1, 9), Stmts: []Stmt{
				&NodeStmt{ID: ident("a", 1, 14)},
				&NodeStmt{ID: ident("b", 1, 17)},
				&NodeStmt{ID: ident("c", 1, 25), Attrs: []Attr{
					kv("x", 1, 28, NumberValue, "1", 1, 30),
					kv("y", 1, 32, NumberValue, "2", 1, 34),
				}},
			}},
		},
		{
			name: "attributes separated by whitespace, as Graphviz allows",
			src:  "digraph G { a [shape=box label=\"Fix\"\n\tx=1; y=2] }",
			want: &Graph{Pos: at(1, 1), ID: "G", IDPos: at(1, 9), Stmts: []Stmt{
				&NodeStmt{ID: ident("a", 1, 13), Attrs: []Attr{
					kv("shape", 1, 16, BareValue, "box", 1, 22),
					kvs("label", 1, 26, "Fix", `"Fix"`, 1, 32),
					kv("x", 2, 2, NumberValue, "1", 2, 4),
					kv("y", 2, 7, NumberValue, "2", 2, 9),
				}},
			}},
		},
		{
			name: "string escapes",
			src:  `digraph G { a [prompt="q\"b\\s\nn\tt\d\."] }`,
			want: &Graph{Pos: at(1, 1), ID: "G", IDPos: at(1, 9), Stmts: []Stmt{
				&NodeStmt{ID: ident("a", 1, 13), Attrs: []Attr{
					kvs("prompt", 1, 16, "q\"b\\s\nn\tt\\d\\.", `"q\"b\\s\nn\tt\d\."`, 1, 23),
				}},
			}},
		},
		{
			name: "multi-line attribute block and multi-line string",
			src: "digraph G {\n" +
				"  review [\n" +
				"    shape=hexagon,\n" +
				"    prompt=\"line one\n" +
				"line two\",\n" +
				"    type=\"wait.human\"\n" +
				"  ]\n" +
				"}",
			want: &Graph{Pos: at(1, 1), ID: "G", IDPos: at(1, 9), Stmts: []Stmt{
				&NodeStmt{ID: ident("review", 2, 3), Attrs: []Attr{
					kv("shape", 3, 5, BareValue, "hexagon", 3, 11),
					kvs("prompt", 4, 5, "line one\nline two", "\"line one\nline two\"", 4, 12),
					kvs("type", 6, 5, "wait.human", `"wait.human"`, 6, 10),
				}},
			}},
		},
		{
			name: "comments of all three kinds, and comment markers inside strings",
			src: "// header\n" +
				"# generated\n" +
				"digraph /* name */ G { # trailing\n" +
				"  a [label=\"# not // a /* comment\"] // after\n" +
				"  /* multi\n  line */ b\n" +
				"}\n# end\n",
			want: &Graph{Pos: at(3, 1), ID: "G", IDPos: at(3, 20), Stmts: []Stmt{
				&NodeStmt{ID: ident("a", 4, 3), Attrs: []Attr{
					kvs("label", 4, 6, "# not // a /* comment", `"# not // a /* comment"`, 4, 12),
				}},
				&NodeStmt{ID: ident("b", 6, 11)},
			}},
		},
		{
			name: "qualified keys",
			src:  "digraph G {\n  retry.backoff.base = 2s\n  a [llm.model=opus, x_1.y_2=1]\n}",
			want: &Graph{Pos: at(1, 1), ID: "G", IDPos: at(1, 9), Stmts: []Stmt{
				&AssignStmt{Attr: kv("retry.backoff.base", 2, 3, DurationValue, "2s", 2, 24)},
				&NodeStmt{ID: ident("a", 3, 3), Attrs: []Attr{
					kv("llm.model", 3, 6, BareValue, "opus", 3, 16),
					kv("x_1.y_2", 3, 22, NumberValue, "1", 3, 30),
				}},
			}},
		},
		{
			name: "durations of every unit",
			src:  "digraph G { a [t1=250ms, t2=900s, t3=15m, t4=2h, t5=1d, t6=0s] }",
			want: &Graph{Pos: at(1, 1), ID: "G", IDPos: at(1, 9), Stmts: []Stmt{
				&NodeStmt{ID: ident("a", 1, 13), Attrs: []Attr{
					kv("t1", 1, 16, DurationValue, "250ms", 1, 19),
					kv("t2", 1, 26, DurationValue, "900s", 1, 29),
					kv("t3", 1, 35, DurationValue, "15m", 1, 38),
					kv("t4", 1, 43, DurationValue, "2h", 1, 46),
					kv("t5", 1, 50, DurationValue, "1d", 1, 53),
					kv("t6", 1, 57, DurationValue, "0s", 1, 60),
				}},
			}},
		},
		{
			name: "numbers and booleans",
			src:  "digraph G { a [n1=42, n2=-1, n3=0.5, n4=-3.14, n5=.5, n6=-.5, b1=true, b2=false] }",
			want: &Graph{Pos: at(1, 1), ID: "G", IDPos: at(1, 9), Stmts: []Stmt{
				&NodeStmt{ID: ident("a", 1, 13), Attrs: []Attr{
					kv("n1", 1, 16, NumberValue, "42", 1, 19),
					kv("n2", 1, 23, NumberValue, "-1", 1, 26),
					kv("n3", 1, 30, NumberValue, "0.5", 1, 33),
					kv("n4", 1, 38, NumberValue, "-3.14", 1, 41),
					kv("n5", 1, 48, NumberValue, ".5", 1, 51),
					kv("n6", 1, 55, NumberValue, "-.5", 1, 58),
					kv("b1", 1, 63, BoolValue, "true", 1, 66),
					kv("b2", 1, 72, BoolValue, "false", 1, 75),
				}},
			}},
		},
		{
			name: "bare values with dots, colons, dashes and slashes",
			src:  "digraph G {\n a [type=verify.artifacts, m=gpt-4o:latest, p=docs/x.md, T=True]\n b [q=a/b//comment\n] }",
			want: &Graph{Pos: at(1, 1), ID: "G", IDPos: at(1, 9), Stmts: []Stmt{
				&NodeStmt{ID: ident("a", 2, 2), Attrs: []Attr{
					kv("type", 2, 5, BareValue, "verify.artifacts", 2, 10),
					kv("m", 2, 28, BareValue, "gpt-4o:latest", 2, 30),
					kv("p", 2, 45, BareValue, "docs/x.md", 2, 47),
					kv("T", 2, 58, BareValue, "True", 2, 60),
				}},
				&NodeStmt{ID: ident("b", 3, 2), Attrs: []Attr{kv("q", 3, 5, BareValue, "a/b", 3, 7)}},
			}},
		},
		{
			name: "values on the line after =",
			src:  "digraph G {\n a [label =\n   \"x\"]\n}",
			want: &Graph{Pos: at(1, 1), ID: "G", IDPos: at(1, 9), Stmts: []Stmt{
				&NodeStmt{ID: ident("a", 2, 2), Attrs: []Attr{kvs("label", 2, 5, "x", `"x"`, 3, 4)}},
			}},
		},
		{
			name: "nested subgraphs with scoped defaults and anonymous blocks",
			src: "digraph G {\n" +
				"  subgraph cluster_loop {\n" +
				"    label = \"Loop A\"\n" +
				"    node [thread_id=\"loop-a\", timeout=900s]\n" +
				"    subgraph \"inner one\" { plan; { implement } }\n" +
				"  }\n" +
				"  subgraph { x }\n" +
				"}",
			want: &Graph{Pos: at(1, 1), ID: "G", IDPos: at(1, 9), Stmts: []Stmt{
				&Subgraph{Pos: at(2, 3), ID: "cluster_loop", Stmts: []Stmt{
					&AssignStmt{Attr: kvs("label", 3, 5, "Loop A", `"Loop A"`, 3, 13)},
					&AttrStmt{Pos: at(4, 5), Kind: NodeAttrs, Attrs: []Attr{
						kvs("thread_id", 4, 11, "loop-a", `"loop-a"`, 4, 21),
						kv("timeout", 4, 31, DurationValue, "900s", 4, 39),
					}},
					&Subgraph{Pos: at(5, 5), ID: "inner one", Stmts: []Stmt{
						&NodeStmt{ID: ident("plan", 5, 28)},
						&Subgraph{Pos: at(5, 34), Stmts: []Stmt{&NodeStmt{ID: ident("implement", 5, 36)}}},
					}},
				}},
				&Subgraph{Pos: at(7, 3), Stmts: []Stmt{&NodeStmt{ID: ident("x", 7, 14)}}},
			}},
		},
		{
			name: "CRLF line endings",
			src:  "digraph G {\r\n  a [prompt=\"one\r\ntwo\"]\r\n  a -> b\r\n}\r\n",
			want: &Graph{Pos: at(1, 1), ID: "G", IDPos: at(1, 9), Stmts: []Stmt{
				&NodeStmt{ID: ident("a", 2, 3), Attrs: []Attr{
					kvs("prompt", 2, 6, "one\ntwo", "\"one\r\ntwo\"", 2, 13),
				}},
				&EdgeStmt{Nodes: []Ident{ident("a", 4, 3), ident("b", 4, 8)}},
			}},
		},
		{
			name: "byte order mark takes no column",
			src:  "\xEF\xBB\xBFdigraph G { a }",
			want: &Graph{Pos: at(1, 1), ID: "G", IDPos: at(1, 9), Stmts: []Stmt{&NodeStmt{ID: ident("a", 1, 13)}}},
		},
		{
			name: "columns count bytes: tabs and UTF-8",
			src:  "digraph G {\n\t\ta [label=\"héllo\", x=1]\n}",
			want: &Graph{Pos: at(1, 1), ID: "G", IDPos: at(1, 9), Stmts: []Stmt{
				&NodeStmt{ID: ident("a", 2, 3), Attrs: []Attr{
					kvs("label", 2, 6, "héllo", `"héllo"`, 2, 12),
					kv("x", 2, 22, NumberValue, "1", 2, 24),
				}},
			}},
		},
		{
			name: "keywords only count in lower case where DOT allows them",
			src:  "digraph G { nodes; edge_x -> graph_y }",
			want: &Graph{Pos: at(1, 1), ID: "G", IDPos: at(1, 9), Stmts: []Stmt{
				&NodeStmt{ID: ident("nodes", 1, 13)},
				&EdgeStmt{Nodes: []Ident{ident("edge_x", 1, 20), ident("graph_y", 1, 30)}},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustParse(t, tt.src)
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("Parse (-got +want):\n%s", diff)
			}
			checkPositions(t, []byte(tt.src), got)
			checkRoundTrip(t, got)
		})
	}
}
