package attractor

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLoadRefusesLargeFiles: a pipeline file over MaxSourceBytes is
// refused before it is parsed, with one diagnostic on line 1 giving the
// size and the limit; one at the limit is parsed.
func TestLoadRefusesLargeFiles(t *testing.T) {
	head := "digraph g { start [shape=Mdiamond]; done [shape=Msquare]; start -> done }\n"
	pad := func(n int) []byte { return []byte(head + "//" + strings.Repeat("x", n-len(head)-3) + "\n") }

	_, ds, err := Load("big.dot", pad(MaxSourceBytes+1))
	if err == nil {
		t.Fatal("a file over the limit loaded")
	}
	want := Diagnostics{{Rule: RuleSyntax, Severity: SeverityError, File: "big.dot", Line: 1, Col: 1,
		Message: "the file is 1048577 bytes, over the 1048576-byte (1 MiB) limit for pipeline files",
		Fix:     "split the pipeline into smaller ones, or move long prompts into files the nodes read"}}
	if diff := cmp.Diff(ds, want); diff != "" {
		t.Errorf("diagnostics (-got +want):\n%s", diff)
	}
	if _, _, err := Load("at-limit.dot", pad(MaxSourceBytes)); err != nil {
		t.Errorf("a file at the limit: %v", err)
	}
}
