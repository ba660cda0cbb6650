package dot

import (
	"strings"
	"testing"
)

// TestParseErrors pins the full text of every rejection: position, what
// was expected and found, and the hint.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string
	}{
		{"empty file", "", "ci.dot:1:1: file is empty: expected `digraph NAME { ... }`"},
		{"only a byte order mark", "\xEF\xBB\xBF", "ci.dot:1:1: file is empty: expected `digraph NAME { ... }`"},
		{"only whitespace", "  \n\t\r\n", "ci.dot:1:1: file has only whitespace and comments: expected `digraph NAME { ... }`"},
		{"only comments", "// a\n# b\n/* c */\n", "ci.dot:1:1: file has only whitespace and comments: expected `digraph NAME { ... }`"},
		{"no digraph", "a -> b\n", "ci.dot:1:1: file has no digraph: expected `digraph NAME { ... }`, found \"a\""},
		{"no digraph after a comment", "// x\nnode [shape=box]", "ci.dot:2:1: file has no digraph: expected `digraph NAME { ... }`, found keyword \"node\""},
		{"strict", "strict digraph G {}", "ci.dot:1:1: `strict` graphs are not supported: remove \"strict\" and write `digraph NAME { ... }`"},
		{"undirected graph", "// pipeline\ngraph G { a -- b }", "ci.dot:2:1: undirected graphs are not supported: write `digraph NAME { ... }` instead of \"graph\""},
		{"graph attributes alone", "graph [goal=\"ship\"]\n", "ci.dot:1:1: graph attributes outside a digraph: put `graph [...]` inside `digraph NAME { ... }`, e.g. digraph pipeline { graph [goal=\"...\"] ... }"},
		{"upper-case digraph", "DiGraph G {}", `ci.dot:1:1: keywords are lower-case here: write "digraph" instead of "DiGraph"`},
		{"undirected edge", "digraph G {\n  a -- b\n}", `ci.dot:2:5: undirected edge "--" is not supported: use "->"`},
		{"undirected hop in a chain", "digraph G { a -> b -- c }", `ci.dot:1:20: undirected edge "--" is not supported: use "->"`},
		{"HTML label", "digraph G { a [label=<<b>x</b>>] }", `ci.dot:1:22: HTML labels (<...>) are not supported: use a quoted string, e.g. label="..."`},
		{"HTML node ID", "digraph G { <a> }", `ci.dot:1:13: HTML labels (<...>) are not supported: use a quoted string, e.g. label="..."`},
		{"second graph", "digraph A {}\n\ndigraph B {}", "ci.dot:3:1: a second graph: a file holds exactly one `digraph NAME { ... }`; put each pipeline in its own .dot file"},
		{"second graph in braces only", "digraph A {} {}", "ci.dot:1:14: a second graph: a file holds exactly one `digraph NAME { ... }`; put each pipeline in its own .dot file"},
		{"second strict graph", "digraph A {}\nstrict digraph B {}", "ci.dot:2:1: a second graph: a file holds exactly one `digraph NAME { ... }`; put each pipeline in its own .dot file"},
		{"defaults after graph", "digraph A {}\nnode [x=1]", "ci.dot:2:1: unexpected keyword \"node\" after the closing \"}\" of the graph: a file holds exactly one `digraph NAME { ... }`"},
		{"junk after graph", "digraph A {} x", "ci.dot:1:14: unexpected \"x\" after the closing \"}\" of the graph: a file holds exactly one `digraph NAME { ... }`"},
		{"quoted node ID", "digraph G {\n  \"Run tests\" [shape=box]\n}", `ci.dot:2:3: quoted node ID "Run tests": node IDs must be bare identifiers ([A-Za-z_][A-Za-z0-9_]*); use an ID like run_tests and put display text in label="..."`},
		{"quoted edge target", "digraph G { a -> \"b\" }", `ci.dot:1:18: quoted node ID "b": node IDs must be bare identifiers ([A-Za-z_][A-Za-z0-9_]*); use an ID like run_tests and put display text in label="..."`},
		{"qualified node ID", "digraph G { a.b -> c }", `ci.dot:1:13: node ID "a.b" contains ".": node IDs must be bare identifiers ([A-Za-z_][A-Za-z0-9_]*); use an ID like run_tests and put display text in label="..."`},
		{"port on source", "digraph G { a:n -> b }", `ci.dot:1:14: node ports are not supported ("a:n"): edges connect whole nodes; write "a"`},
		{"port on target", "digraph G { a -> b:s }", `ci.dot:1:19: node ports are not supported ("b:s"): edges connect whole nodes; write "b"`},
		{"missing value before ]", "digraph G { a [label=] }", `ci.dot:1:22: expected a value after "label=", found "]"; write label="" for an empty value`},
		{"missing value at end of file", "digraph G { x =", `ci.dot:1:16: expected a value after "x=", found end of file; write x="" for an empty value`},
		{"missing value before ;", "digraph G { x = ; }", `ci.dot:1:17: expected a value after "x=", found ";"; write x="" for an empty value`},
		{"quoted key after whitespace", "digraph G {\n\n\n    a [x=1 \"label\"=\"y\"]\n}", `ci.dot:4:12: quoted attribute key "label": keys are bare identifiers like label or retry.backoff`},
		{"value after value", "digraph G { a [x=1 2] }", `ci.dot:1:20: expected "]" or "," after attribute, found "2"`},
		{"unterminated string", "digraph G {\n a [prompt=\"abc\n\n}\n", `ci.dot:2:12: unterminated string: no closing quote (") before end of file`},
		{"unterminated string ending in backslash", "digraph G { a [x=\"abc\\", `ci.dot:1:18: unterminated string: no closing quote (") before end of file`},
		{"unterminated block comment", "digraph G {\n  /* x\n}", `ci.dot:2:3: unterminated block comment: "/*" has no matching "*/"`},
		{"unknown character", "digraph G { a @ b }", `ci.dot:1:15: unexpected character "@": expected an identifier, a quoted string or one of { } [ ] = ; , ->`},
		{"non-ASCII identifier", "digraph G { café }", `ci.dot:1:16: unexpected character 'é' (U+00E9): identifiers are ASCII letters, digits and "_"; put other text in a quoted string, e.g. label="..."`},
		{"invalid UTF-8", "digraph G { \xff }", `ci.dot:1:13: invalid UTF-8 byte 0xff: DOT files must be UTF-8 text`},
		{"control character", "digraph G { a \x00 }", `ci.dot:1:15: unexpected character '\x00' (U+0000): expected an identifier, a quoted string or one of { } [ ] = ; , ->`},
		{"string concatenation", "digraph G { a [label=\"a\" + \"b\"] }", `ci.dot:1:26: unexpected "+": string concatenation is not supported; write one quoted string`},
		{"lone dash", "digraph G { a - b }", `ci.dot:1:15: unexpected "-": edges are written "->"`},
		{"unclosed graph", "digraph G {\n a", `ci.dot:2:3: expected "}" to close the graph opened at 1:11, found end of file`},
		{"unclosed subgraph", "digraph G {\n subgraph s { a\n", `ci.dot:3:1: expected "}" to close the subgraph opened at 2:13, found end of file`},
		{"unclosed attribute list", "digraph G { a [x=1", `ci.dot:1:19: expected "]" or "," after attribute, found end of file`},
		{"fractional duration", "digraph G { a [timeout=1.5h] }", `ci.dot:1:24: invalid value "1.5h": numbers look like 42, -1 or 0.5, durations like 900s, 250ms or 2h; quote any other text`},
		{"unknown duration unit", "digraph G { a [timeout=5min] }", `ci.dot:1:24: invalid value "5min": numbers look like 42, -1 or 0.5, durations like 900s, 250ms or 2h; quote any other text`},
		{"negative duration", "digraph G { a [timeout=-5s] }", `ci.dot:1:24: invalid value "-5s": numbers look like 42, -1 or 0.5, durations like 900s, 250ms or 2h; quote any other text`},
		{"attribute without value", "digraph G { a [bold] }", `ci.dot:1:20: expected "=" after attribute key "bold", found "]"`},
		{"quoted attribute key", "digraph G { a [\"label\"=x] }", `ci.dot:1:16: quoted attribute key "label": keys are bare identifiers like label or retry.backoff`},
		{"keyword in another case as node ID", "digraph G { Node [shape=box] }", `ci.dot:1:13: "Node" is a DOT keyword (DOT ignores case in keywords): write "node" for node defaults, or choose another node ID`},
		{"keyword as edge target", "digraph G { a -> node }", `ci.dot:1:18: "node" is a DOT keyword and cannot be a node ID; choose another ID`},
		{"node keyword used as node ID", "digraph G { node -> a }", `ci.dot:1:18: expected "[" after "node" ("node" is a keyword, not a node ID), found "->"`},
		{"edge to anonymous subgraph", "digraph G { a -> {b c} }", `ci.dot:1:18: edges to subgraphs are not supported: write an edge for each node, e.g. a -> b`},
		{"edge to subgraph", "digraph G { a -> subgraph s {b} }", `ci.dot:1:18: edges to subgraphs are not supported: write an edge for each node, e.g. a -> b`},
		{"edge from subgraph", "digraph G { {a b} -> c }", `ci.dot:1:19: edges from subgraphs are not supported: write an edge for each node, e.g. a -> b`},
		{"nested digraph", "digraph G { digraph H {} }", "ci.dot:1:13: unexpected keyword \"digraph\" inside the graph: a file holds one graph; use `subgraph NAME { ... }` to group nodes"},
		{"numeric node ID", "digraph G { 42 }", `ci.dot:1:13: node ID "42" starts with a digit: node IDs must be bare identifiers ([A-Za-z_][A-Za-z0-9_]*); use an ID like run_tests and put display text in label="..."`},
		{"numeric graph name", "digraph 42 {}", `ci.dot:1:9: expected a name or "{" after "digraph", found "42"`},
		{"missing opening brace", "digraph G a", `ci.dot:1:11: expected "{" to open the graph, found "a"`},
		{"statement starting with ]", "digraph G { ] }", `ci.dot:1:13: expected a statement (node, edge, attribute or subgraph), found "]"`},
		{"subgraphs nested too deep", "digraph G {" + strings.Repeat("{", 1000), "ci.dot:1:112: subgraphs nested more than 100 levels deep"},
		{"named subgraphs nested too deep", "digraph G {\n" + strings.Repeat("subgraph s {\n", 1000), "ci.dot:102:1: subgraphs nested more than 100 levels deep"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := Parse(testFile, []byte(tt.src))
			if err == nil {
				t.Fatalf("Parse succeeded with %v, want error %q", g, tt.want)
			}
			checkError(t, testFile, err)
			if got := err.Error(); got != tt.want {
				t.Errorf("error:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}
