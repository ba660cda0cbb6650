package runpage_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/runpage"
)

// The run page sums the usage progress.ndjson gives each agent attempt,
// per node and for the run, and shows it in an "Agent usage" table.
func TestRunPageUsage(t *testing.T) {
	runsDir, f := newRun(t)
	a1 := attractor.Usage{InputTokens: 1500, OutputTokens: 210, CacheReadTokens: 9000, CostUSD: 0.0312, CostSource: attractor.CostReported}
	a2 := attractor.Usage{InputTokens: 700, OutputTokens: 50, CacheWriteTokens: 1024, CostUSD: 0.0105, CostSource: attractor.CostPriced}
	f.progress(
		map[string]any{"time": "2025-01-02T03:04:00Z", "type": "run_started", "run_id": runID, "pipeline": "fix"},
		map[string]any{"time": "2025-01-02T03:04:01Z", "type": "node_started", "run_id": runID, "node": "code"},
		map[string]any{"time": "2025-01-02T03:04:05Z", "type": "attempt_finished", "run_id": runID, "node": "code", "attempt": 1, "status": "fail", "usage": a1},
		map[string]any{"time": "2025-01-02T03:04:08Z", "type": "node_finished", "run_id": runID, "node": "code", "attempt": 2, "status": "success", "usage": a2},
		map[string]any{"time": "2025-01-02T03:04:09Z", "type": "node_started", "run_id": runID, "node": "test"},
		map[string]any{"time": "2025-01-02T03:04:10Z", "type": "node_finished", "run_id": runID, "node": "test", "attempt": 1, "status": "success"},
	)
	p := newPages(t, runsDir, runpage.Options{})
	run, err := p.Load(runID)
	if err != nil {
		t.Fatal(err)
	}
	var want attractor.UsageTotal
	want.Add(a1)
	want.Add(a2)
	if run.Usage != want {
		t.Errorf("run usage %+v, want %+v", run.Usage, want)
	}
	if nodes := run.UsageNodes(); len(nodes) != 1 || nodes[0].ID != "code" || nodes[0].Usage != want {
		t.Errorf("usage nodes %+v, want code alone with %+v", nodes, want)
	}
	var buf bytes.Buffer
	if err := p.Render(&buf, run); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, s := range []string{"<h2>Agent usage</h2>", attractor.Thousands(want.InputTokens), attractor.Thousands(want.CacheReadTokens),
		attractor.Thousands(want.CacheWriteTokens), attractor.Thousands(want.OutputTokens), attractor.USD(a1.CostUSD + a2.CostUSD)} {
		if !strings.Contains(page, s) {
			t.Errorf("page lacks %q", s)
		}
	}
}
