package dot

import (
	"bytes"
	"fmt"
	"testing"
)

// genPipeline writes a pipeline with the given number of nodes and edges
// in the shapes real pipelines use: defaults, a subgraph, attribute-heavy
// nodes, a chain and conditional edges. It stays in the subset gonum reads.
func genPipeline(nodes, edges int) []byte {
	var b bytes.Buffer
	b.WriteString("digraph generated {\n\tgraph [goal=\"exercise the parser\", rankdir=LR]\n")
	b.WriteString("\tnode [shape=box, timeout=\"15m\"]\n\tedge [weight=0]\n")
	b.WriteString("\tsubgraph cluster_all {\n\t\tlabel = \"All steps\"\n")
	for i := range nodes {
		fmt.Fprintf(&b, "\t\tn%d [label=\"Step %d\", prompt=\"Do step %d.\\nThen report \\\"done\\\".\", max_retries=%d] // step %d\n", i, i, i, i%4, i)
	}
	b.WriteString("\t}\n")
	for i := range edges {
		from, to := i%nodes, (i*7+1)%nodes
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, "\tn%d -> n%d\n", from, to)
		case 1:
			fmt.Fprintf(&b, "\tn%d -> n%d [condition=\"outcome=success\", weight=%d]\n", from, to, i%10)
		default:
			fmt.Fprintf(&b, "\tn%d -> n%d [label=\"retry\", loop_restart=false];\n", from, to)
		}
	}
	b.WriteString("}\n")
	return b.Bytes()
}

func BenchmarkParse(b *testing.B) {
	for _, size := range []struct {
		name         string
		nodes, edges int
	}{
		{"1k-nodes-3k-edges", 1000, 3000},
		{"10k-nodes-30k-edges", 10000, 30000},
	} {
		src := genPipeline(size.nodes, size.edges)
		b.Run(size.name, func(b *testing.B) {
			checkGenerated(b, src, size.nodes, size.edges)
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse("bench.dot", src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// checkGenerated makes sure the benchmark parses what it claims to.
func checkGenerated(b *testing.B, src []byte, nodes, edges int) {
	g, err := Parse("bench.dot", src)
	if err != nil {
		b.Fatal(err)
	}
	sub := g.Stmts[3].(*Subgraph)
	if got := len(sub.Stmts) - 1; got != nodes {
		b.Fatalf("generated %d node statements, want %d", got, nodes)
	}
	if got := len(g.Stmts) - 4; got != edges {
		b.Fatalf("generated %d edge statements, want %d", got, edges)
	}
}
