package attractor

import (
	"fmt"
	"strings"
	"testing"
)

// genPipeline writes a pipeline with n nodes and 3n edges: a chain from
// start to exit, a conditional fail edge back two steps (guarded, so the
// loop rules have real work) and a success skip ahead.
func genPipeline(n int) []byte {
	var b strings.Builder
	b.WriteString("digraph big {\n  graph [goal=\"bench\", model_stylesheet=\"* { llm_model: m; } .odd { llm_model: o; }\"]\n")
	b.WriteString("  node [timeout=\"15m\"]\n  start [shape=Mdiamond]\n  exit [shape=Msquare]\n")
	for i := range n - 2 {
		class := ""
		if i%2 == 1 {
			class = `, class="odd"`
		}
		fmt.Fprintf(&b, "  n%d [prompt=\"step %d of $goal\"%s]\n", i, i, class)
	}
	name := func(i int) string {
		switch {
		case i < 0:
			return "start"
		case i >= n-2:
			return "exit"
		}
		return fmt.Sprintf("n%d", i)
	}
	edges := 0
	for i := -1; i < n-2; i++ {
		fmt.Fprintf(&b, "  %s -> %s\n", name(i), name(i+1))
		edges++
	}
	for i := 0; edges < 3*n; i = (i + 1) % (n - 2) {
		if i >= 2 {
			fmt.Fprintf(&b, "  %s -> %s [condition=\"outcome=fail && context.failure_class=transient_infra\"]\n", name(i), name(i-2))
		} else {
			fmt.Fprintf(&b, "  %s -> %s [condition=\"outcome=success\", weight=1]\n", name(i), name(i+2))
		}
		edges++
		if edges < 3*n {
			fmt.Fprintf(&b, "  %s -> %s [condition=\"outcome=success\", weight=1]\n", name(i), name(i+2))
			edges++
		}
	}
	b.WriteString("}\n")
	return []byte(b.String())
}

func TestGenPipelineLoadsClean(t *testing.T) {
	p, ds, err := Load("big.dot", genPipeline(100))
	if err != nil || len(ds) != 0 {
		t.Fatalf("Load: %v %v", err, ds)
	}
	if len(p.Nodes) != 100 || len(p.Edges) != 300 {
		t.Errorf("%d nodes, %d edges; want 100, 300", len(p.Nodes), len(p.Edges))
	}
}

// genRepairPipeline writes n/2 steps, each followed by a diamond that
// sends a failure back to its step (unguarded, so fail_loop_failure_class_guard
// and the component indices run) and a success on, with a Kilroy
// attribute and a bare-integer timeout on every step.
func genRepairPipeline(n int) []byte {
	var b strings.Builder
	b.WriteString("digraph big {\n  start [shape=Mdiamond]\n  exit [shape=Msquare]\n  start -> s0\n")
	steps := (n - 2) / 2
	for i := range steps {
		next := fmt.Sprintf("s%d", i+1)
		if i == steps-1 {
			next = "exit"
		}
		fmt.Fprintf(&b, "  s%d [llm_prompt=\"step %d\", timeout=600]\n  c%d [shape=diamond]\n  s%d -> c%d\n", i, i, i, i, i)
		fmt.Fprintf(&b, "  c%d -> %s [condition=\"outcome=success\"]\n  c%d -> s%d [condition=\"outcome=fail\"]\n", i, next, i, i)
	}
	b.WriteString("}\n")
	return []byte(b.String())
}

func TestGenRepairPipelineLoads(t *testing.T) {
	p, ds, err := Load("big.dot", genRepairPipeline(100))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	counts := map[string]int{}
	for _, d := range ds {
		counts[d.Rule]++
	}
	want := map[string]int{RuleAttrAlias: 49, RuleDurationUnit: 49, RuleFailLoopGuard: 49}
	if len(p.Nodes) != 100 || fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("%d nodes, diagnostics %v; want 100 nodes, %v", len(p.Nodes), counts, want)
	}
}

func BenchmarkLoad(b *testing.B) {
	for _, tc := range []struct {
		name string
		gen  func(int) []byte
	}{{"chain", genPipeline}, {"repair", genRepairPipeline}} {
		for _, n := range []int{1000, 5000, 10000} {
			src := tc.gen(n)
			b.Run(fmt.Sprintf("%s/nodes=%d", tc.name, n), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(src)))
				for b.Loop() {
					if _, _, err := Load("big.dot", src); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// FuzzLoad checks that no input makes Load panic or hang, and that a nil
// pipeline always comes with an error.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(`digraph G { start [shape=Mdiamond]; exit [shape=Msquare]; start -> exit [condition="outcome=ok"] }`))
	f.Add([]byte(`digraph G { graph [model_stylesheet="* { llm_model: x; }"]; a [timeout=900s, class="a,b"]; subgraph s { label="L"; b } a -> b }`))
	f.Add([]byte(`digraph G { a -> b [condition="context.x=\"y\" && outcome!=fail"] }`))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, src []byte) {
		p, ds, err := Load("f.dot", src)
		if p == nil && err == nil {
			t.Fatal("nil pipeline without an error")
		}
		if err != nil && len(ds) == 0 {
			t.Fatal("error without diagnostics")
		}
	})
}
