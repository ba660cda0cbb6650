package ghserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLiveOutputTail: a node's logs are its output; an agent node that
// writes none shows its transcript so far, readable, instead.
func TestLiveOutputTail(t *testing.T) {
	tool, agent := t.TempDir(), t.TempDir()
	write := func(dir, name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(tool, "stdout.log", "compiling\n")
	write(tool, "stderr.log", "warning: x\n")
	write(agent, "agent.stdout.jsonl", `{"type":"assistant","message":{"content":[{"type":"text","text":"Looking at the failing test"}]}}`+"\n")
	if got := liveOutputTail("build", tool); !strings.Contains(got, "compiling") || !strings.Contains(got, "warning: x") {
		t.Errorf("tool node's tail %q", got)
	}
	if got := liveOutputTail("fix", agent); !strings.Contains(got, "Looking at the failing test") || strings.Contains(got, `"type"`) {
		t.Errorf("agent node's tail %q, want its transcript made readable", got)
	}
	if got := liveOutputTail("none", t.TempDir()); got != "" {
		t.Errorf("tail of a node with no output %q", got)
	}
}
