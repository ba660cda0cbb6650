package attractor

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// BenchmarkRunChain runs a 200-node chain of `true` tool nodes and reports
// the engine's own time per node: the run's wall time minus the time spent
// inside Host.Exec.
func BenchmarkRunChain(b *testing.B) {
	const n = 200
	var src strings.Builder
	src.WriteString("digraph chain {\nstart [shape=Mdiamond]\ndone [shape=Msquare]\n")
	ids := []string{"start"}
	for i := range n {
		id := fmt.Sprintf("n%03d", i)
		fmt.Fprintf(&src, "%s [shape=parallelogram, tool_command=\"true\"]\n", id)
		ids = append(ids, id)
	}
	src.WriteString(strings.Join(append(ids, "done"), " -> ") + "\n}\n")
	p, _, err := Load("chain.dot", []byte(src.String()))
	if err != nil {
		b.Fatal(err)
	}
	var engine time.Duration
	for b.Loop() {
		host := &execHost{}
		cfg := RunConfig{RunID: "bench", Workspace: b.TempDir(), RunDir: b.TempDir(), Host: host}
		began := time.Now()
		res, err := Run(context.Background(), p, cfg)
		total := time.Since(began)
		if err != nil || res.Status != StatusSuccess {
			b.Fatalf("run: %v %+v", err, res)
		}
		engine += total - host.execTime
	}
	b.ReportMetric(float64(engine.Nanoseconds())/float64(b.N*(n+2)), "engine-ns/node")
}
