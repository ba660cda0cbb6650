package attractor

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// tool.output is capped at toolOutputCap bytes, keeping the tail (where
// a failing command says why) and cutting on a rune boundary; the whole
// output stays in stdout.log.
func TestToolOutputCapped(t *testing.T) {
	if toolOutputCap >= tailBytes {
		t.Fatalf("toolOutputCap %d must be below the host tail %d for this test to reach the cap", toolOutputCap, tailBytes)
	}
	repeat := func(s string, n int) string { return fmt.Sprintf(`printf '%s%%.0s' $(seq %d)`, s, n) }
	tests := []struct {
		name    string
		command string
		wantLog int    // bytes in stdout.log
		wantLen int    // bytes in tool.output
		suffix  string // tool.output ends with it
		absent  string // tool.output lacks it
	}{
		{
			name:    "under the cap kept whole",
			command: "printf 'HEAD small TAIL'",
			wantLog: 15, wantLen: 15, suffix: "HEAD small TAIL",
		},
		{
			name:    "over the cap keeps the tail",
			command: "printf HEAD; " + repeat("x", 20000) + "; printf TAIL",
			wantLog: 20008, wantLen: toolOutputCap, suffix: "xxTAIL", absent: "HEAD",
		},
		{
			// 10000 three-byte runes: the last 8192 bytes start inside a
			// rune, so the cut moves forward to the next rune start.
			name:    "cut on a rune boundary",
			command: repeat("€", 10000),
			wantLog: 30000, wantLen: toolOutputCap - toolOutputCap%3, suffix: "€€",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			p := mustLoad(t, chain("", fmt.Sprintf("work [shape=parallelogram, tool_command=%q]", tt.command)))
			res := h.run(p)
			if res.Status != StatusSuccess {
				t.Fatalf("run = %s: %s", res.Status, res.FailureReason)
			}
			out, ok := res.Context["tool.output"].(string)
			if !ok {
				t.Fatalf("tool.output = %#v, want a string", res.Context["tool.output"])
			}
			got := []any{len(h.stageFile("work", "stdout.log")), len(out), utf8.ValidString(out), strings.HasSuffix(out, tt.suffix)}
			want := []any{tt.wantLog, tt.wantLen, true, true}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("log bytes, tool.output bytes, valid UTF-8, keeps tail (-got +want):\n%s", diff)
			}
			if tt.absent != "" && strings.Contains(out, tt.absent) {
				t.Errorf("tool.output keeps %q from the head of the output", tt.absent)
			}
		})
	}
}
