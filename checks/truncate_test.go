package checks

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// bigLog is about size bytes of numbered lines mixing 1- to 4-byte runes.
func bigLog(size int) string {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "line %06d: é ✓ 𝄞 ok\n", i)
	}
	return b.String()
}

var markerRE = regexp.MustCompile(`\n\[… (\d+) bytes cut from the middle(?:; full log: (\S+))? …\]\n`)

func TestTruncateMiddle(t *testing.T) {
	s := bigLog(200 << 10)
	const url = "https://kilroy.example/runs/r1#vet"
	got := Truncate(s, MaxOutput, url)
	if len(got) > MaxOutput || len(got) < MaxOutput-200 {
		t.Errorf("len %d, want just under %d", len(got), MaxOutput)
	}
	if !utf8Valid(got) {
		t.Error("not valid UTF-8")
	}
	m := markerRE.FindStringSubmatchIndex(got)
	if m == nil {
		t.Fatalf("no cut marker in output")
	}
	cut, _ := strconv.Atoi(got[m[2]:m[3]])
	if got[m[4]:m[5]] != url {
		t.Errorf("marker links %q, want %q", got[m[4]:m[5]], url)
	}
	head, tail := got[:m[0]], got[m[1]:]
	if !strings.HasPrefix(s, head) || !strings.HasSuffix(s, tail) {
		t.Error("output is not a prefix and a suffix of the input")
	}
	if len(head)+len(tail)+cut != len(s) {
		t.Errorf("marker says %d bytes cut; %d were", cut, len(s)-len(head)-len(tail))
	}
	// The cut falls on line boundaries and roughly in the middle.
	if !strings.HasSuffix(head, "\n") || !strings.HasPrefix(tail, "line ") {
		t.Errorf("cut not on line boundaries: head ends %q, tail starts %q", head[len(head)-10:], tail[:10])
	}
	if d := len(head) - len(tail); d > 100 || d < -100 {
		t.Errorf("head %d bytes, tail %d: not the middle", len(head), len(tail))
	}
}

func TestTruncateBounds(t *testing.T) {
	s := strings.Repeat("aé✓𝄞", 50) // no newlines: cuts fall between runes
	for max := 0; max <= len(s)+1; max++ {
		for _, url := range []string{"", "https://x.example/l"} {
			got := Truncate(s, max, url)
			if len(got) > max && len(s) > max {
				t.Fatalf("max %d: got %d bytes", max, len(got))
			}
			if !utf8Valid(got) {
				t.Fatalf("max %d: invalid UTF-8 %q", max, got)
			}
			if len(s) <= max && got != s {
				t.Fatalf("max %d: a string that fits was changed", max)
			}
		}
	}
}

func TestSummaryTextOfHugeLog(t *testing.T) {
	log := bigLog(200 << 10)
	opts := withTail(githubOpts(), func(string, string) string { return log })
	_, summary, text := Summary(failedRun(t), opts)
	if len(text) > MaxOutput || len(summary) > MaxOutput {
		t.Fatalf("text %d bytes, summary %d bytes", len(text), len(summary))
	}
	if !utf8Valid(text) {
		t.Error("text is not valid UTF-8")
	}
	if !strings.Contains(text, "bytes cut from the middle; full log: https://kilroy.example/runs/r1#vet") {
		t.Errorf("text does not say it was cut and where the full log is")
	}
	if !strings.Contains(text, "line 000000") || !strings.Contains(text, strings.TrimSpace(log[len(log)-30:])) {
		t.Error("text lost the start or the end of the log")
	}
}

func TestSummaryOfHugeGraph(t *testing.T) {
	v := &RunView{Pipeline: "big", Status: RunSuccess}
	for i := range 3000 {
		id := fmt.Sprintf("node_with_a_long_name_%04d", i)
		v.Nodes = append(v.Nodes, NodeView{ID: id, Label: id, Kind: attractor.KindTool, State: StateSuccess, Attempts: 1, CheckpointSHA: sha(byte(i))})
		if i > 0 {
			v.Edges = append(v.Edges, EdgeView{From: v.Nodes[i-1].ID, To: id, Taken: 1})
		}
	}
	_, summary, _ := Summary(v, githubOpts())
	if len(summary) > MaxOutput || !utf8Valid(summary) {
		t.Fatalf("summary %d bytes (valid UTF-8: %v)", len(summary), utf8Valid(summary))
	}
	if strings.Contains(summary, "```mermaid") {
		t.Error("a graph too large to render was kept")
	}
	if !strings.Contains(summary, "bytes cut from the middle; full log: https://kilroy.example/runs/r1") {
		t.Error("the cut summary does not say so")
	}
}
