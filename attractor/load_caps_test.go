package attractor

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// genFlat writes n node statements on one line, the shape of the graph
// that cost minutes before the caps: a 1 MiB file of 150,000 nodes. Names
// are short base-36 numbers so that 150,000 fit in 1 MiB.
func genFlat(n int) []byte {
	var b strings.Builder
	b.WriteString("digraph g { start [shape=Mdiamond]; exit [shape=Msquare]; start -> exit;")
	for i := range n {
		b.WriteString(" x" + base36(i))
	}
	b.WriteString(" }\n")
	return []byte(b.String())
}

// genChain writes one edge statement through n nodes, none declared.
func genChain(n int) []byte {
	var b strings.Builder
	b.WriteString("digraph g { start [shape=Mdiamond]; exit [shape=Msquare]; start")
	for i := range n {
		b.WriteString("->x" + base36(i))
	}
	b.WriteString("->exit }\n")
	return []byte(b.String())
}

// genUnknown declares n nodes and names n other, undeclared ones in
// edges: every unknown name could get a "did you mean" over every node.
func genUnknown(n int) []byte {
	var b strings.Builder
	b.WriteString("digraph g { start [shape=Mdiamond]; exit [shape=Msquare]; start -> exit;")
	for i := range n {
		fmt.Fprintf(&b, " a%05d;", i)
	}
	for i := 0; i < n; i += 2 {
		fmt.Fprintf(&b, " b%05d->b%05d;", i, i+1)
	}
	b.WriteString(" }\n")
	return []byte(b.String())
}

// genStylesheet writes a stylesheet of n rules, each placed in the source.
func genStylesheet(n int) []byte {
	var b strings.Builder
	b.WriteString(`digraph g { graph [model_stylesheet="`)
	for i := range n {
		fmt.Fprintf(&b, "#a%d { llm_model: m; } ", i)
	}
	b.WriteString(`"]; start [shape=Mdiamond]; exit [shape=Msquare]; start -> exit }` + "\n")
	return []byte(b.String())
}

// genCondition writes one edge whose condition has n clauses, each with
// an unqualified context key that Load warns about and places.
func genCondition(n int) []byte {
	var b strings.Builder
	b.WriteString(`digraph g { start [shape=Mdiamond]; exit [shape=Msquare]; start -> exit [condition="`)
	for i := range n {
		if i > 0 {
			b.WriteString(" && ")
		}
		fmt.Fprintf(&b, "k%d=1", i)
	}
	b.WriteString(`"] }` + "\n")
	return []byte(b.String())
}

func base36(i int) string {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	s := ""
	for {
		s = string(digits[i%36]) + s
		if i /= 36; i == 0 {
			return s
		}
	}
}

// colOf is the column of s in the one-line src.
func colOf(src []byte, s string) int { return strings.Index(string(src), s) + 1 }

// TestLoadRefusesGraphsOverCaps: a graph with more nodes or edges than its
// caps is refused before it is built, with one diagnostic at the first
// node or edge past the cap that names the file, the cap and the setting;
// one at the caps loads.
func TestLoadRefusesGraphsOverCaps(t *testing.T) {
	fix := "split the pipeline into smaller ones; a step that repeats is one node in a loop, not one node per repeat"
	tests := []struct {
		name string
		src  []byte
		caps GraphCaps
		want Diagnostics // nil: loads
	}{
		{"nodes over the default", genFlat(DefaultMaxNodes - 1), GraphCaps{}, Diagnostics{{Rule: RuleSyntax, Severity: SeverityError,
			File: "big.dot", Line: 1, Col: colOf(genFlat(DefaultMaxNodes-1), " x"+base36(DefaultMaxNodes-2)+" ") + 1,
			Message: "big.dot has more than 10000 nodes, the most a pipeline may have (server policy limits.max_graph_nodes)", Fix: fix}}},
		{"nodes at a cap", []byte("digraph g { start [shape=Mdiamond]; exit [shape=Msquare]; node [shape=parallelogram, tool_command=true]; x0; x1; x2; x3; x4; x5; x6; x7; start -> x0 -> x1 -> x2 -> x3 -> x4 -> x5 -> x6 -> x7 -> exit }"), GraphCaps{MaxNodes: 10}, nil},
		{"nodes over a cap", genFlat(9), GraphCaps{MaxNodes: 10}, Diagnostics{{Rule: RuleSyntax, Severity: SeverityError,
			File: "big.dot", Line: 1, Col: colOf(genFlat(9), " x8 ") + 1,
			Message: "big.dot has more than 10 nodes, the most a pipeline may have (server policy limits.max_graph_nodes)", Fix: fix}}},
		{"edges over a cap", genChain(3), GraphCaps{MaxEdges: 3}, Diagnostics{{Rule: RuleSyntax, Severity: SeverityError,
			File: "big.dot", Line: 1, Col: colOf(genChain(3), "start->"),
			Message: "big.dot has more than 3 edges, the most a pipeline may have (server policy limits.max_graph_edges)", Fix: fix}}},
		{"edges at a cap", []byte("digraph g { start [shape=Mdiamond]; exit [shape=Msquare]; start -> exit }"), GraphCaps{MaxEdges: 1}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, ds, err := Load("big.dot", tt.src, WithGraphCaps(tt.caps))
			if tt.want == nil {
				if p == nil || ds.HasErrors() {
					t.Fatalf("Load: %v %v", err, ds)
				}
				return
			}
			if p != nil || err == nil || !strings.Contains(err.Error(), tt.want[0].Message) {
				t.Errorf("Load returned a pipeline or error %v; want none and %q", err, tt.want[0].Message)
			}
			if diff := cmp.Diff(ds, tt.want); diff != "" {
				t.Errorf("diagnostics (-got +want):\n%s", diff)
			}
		})
	}
}

// BenchmarkLoadHostile loads graphs shaped to cost the most per byte, each
// up to the 1 MiB file cap: over the caps they must be refused in well
// under 100 ms; within them (unknown names, long stylesheets and
// conditions) loading must stay linear, well under 2 s and 300 MB.
func BenchmarkLoadHostile(b *testing.B) {
	for _, tc := range []struct {
		name    string
		src     []byte
		refused bool
	}{
		{"flat-150k-nodes", genFlat(150_000), true},
		{"chain-150k-edges", genChain(150_000), true},
		{"unknown-names-10k", genUnknown(DefaultMaxNodes - 2), false},
		{"stylesheet-40k-rules", genStylesheet(40_000), false},
		{"condition-80k-clauses", genCondition(80_000), false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			if len(tc.src) > MaxSourceBytes {
				b.Fatalf("%d bytes, over the file cap", len(tc.src))
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(tc.src)))
			for b.Loop() {
				p, _, err := Load("big.dot", tc.src)
				if refused := p == nil && err != nil; refused != tc.refused {
					b.Fatalf("refused = %v, want %v (%v)", refused, tc.refused, err)
				}
			}
		})
	}
}
