package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// validatePipeline writes a pipeline of n nodes: a chain from start to
// exit with a conditional edge back, each step on a line of its own, or
// with oneLine every step unreachable on the one line, so that each of
// the n diagnostics prints that line.
func validatePipeline(n int, oneLine bool) string {
	var b strings.Builder
	b.WriteString("digraph big {\n  start [shape=Mdiamond]\n  exit [shape=Msquare]\n")
	if oneLine {
		b.WriteString("  start -> exit\n ")
		for i := range n - 2 {
			fmt.Fprintf(&b, " n%d [prompt=\"step %d\"];", i, i)
		}
		b.WriteString("\n}\n")
		return b.String()
	}
	for i := range n - 2 {
		fmt.Fprintf(&b, "  n%d [prompt=\"step %d\"]\n", i, i)
	}
	b.WriteString("  start -> n0\n")
	for i := range n - 3 {
		fmt.Fprintf(&b, "  n%d -> n%d\n  n%d -> n%d [condition=\"outcome=fail && context.failure_class=transient_infra\"]\n", i, i+1, i+1, i)
	}
	fmt.Fprintf(&b, "  n%d -> exit\n}\n", n-3)
	return b.String()
}

// BenchmarkValidate runs `kilroy-bot validate FILE` on 5,000-node
// pipelines: a clean one, and one whose every node is reported with its
// (one, long) source line. Both must take well under a second.
func BenchmarkValidate(b *testing.B) {
	for _, tc := range []struct {
		name    string
		oneLine bool
		want    int
	}{{"clean-5k", false, 0}, {"5k-diagnostics-one-line", true, 0}} {
		file := filepath.Join(b.TempDir(), "big.dot")
		if err := os.WriteFile(file, []byte(validatePipeline(5000, tc.oneLine)), 0o644); err != nil {
			b.Fatal(err)
		}
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if code := runValidate(context.Background(), []string{file}, io.Discard, io.Discard); code != tc.want {
					b.Fatalf("exit %d, want %d", code, tc.want)
				}
			}
		})
	}
}
