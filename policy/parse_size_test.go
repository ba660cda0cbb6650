package policy

import (
	"fmt"
	"strings"
	"testing"
)

// manyPipelines is a configuration declaring n pipelines.
func manyPipelines(n int) []byte {
	var b strings.Builder
	b.WriteString("version: 1\npipelines:\n")
	for i := range n {
		fmt.Fprintf(&b, "  p%d:\n    graph: .kilroy/p%d.dot\n", i, i)
	}
	return []byte(b.String())
}

// TestConfigSizeLimit: a configuration over MaxConfigBytes is refused
// before it is decoded, on line 1, with its size and the limit.
func TestConfigSizeLimit(t *testing.T) {
	big := manyPipelines(30000) // some 1.2 MB
	if len(big) <= MaxConfigBytes {
		t.Fatalf("the fixture is %d bytes, not over the limit", len(big))
	}
	_, err := ParseRepoConfig(".kilroy/config.yml", big)
	want := fmt.Sprintf(".kilroy/config.yml:1:1: the file is %d bytes, over the 1048576-byte (1 MiB) limit for .kilroy/config.yml: remove what it does not need", len(big))
	if err == nil || err.Error() != want {
		t.Errorf("ParseRepoConfig: %v\nwant %s", err, want)
	}
	if _, err := ParseRepoConfig(".kilroy/config.yml", manyPipelines(20000)); err != nil {
		t.Errorf("a configuration under the limit: %v", err)
	}
}
