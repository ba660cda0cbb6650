package runpage_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/checks"
	"github.com/kilroy-bot/kilroy-bot/runpage"
)

// TestPageCleansOutput: the run page shows a node's coloured log and
// reason without escape sequences or carriage returns; the log file keeps
// them.
func TestPageCleansOutput(t *testing.T) {
	runsDir, f := newRun(t)
	const raw = "\x1b[1m==== test session starts ====\x1b[0m\r\n\x1b[31mE       assert -1 == 5\x1b[0m\r\n 10%\r100%\n"
	f.progress(
		map[string]any{"time": "2025-01-02T03:04:00Z", "type": "run_started", "run_id": runID, "pipeline": "ci"},
		map[string]any{"time": "2025-01-02T03:04:01Z", "type": "node_started", "run_id": runID, "node": "test"},
		map[string]any{"time": "2025-01-02T03:04:02Z", "type": "node_finished", "run_id": runID, "node": "test", "attempt": 1,
			"status": "fail", "reason": "tool_command exited with status 1: \x1b[31mE       assert -1 == 5\x1b[0m", "duration_ms": 1000},
	)
	f.write("nodes/test/stdout.log", raw)
	p := newPages(t, runsDir, runpage.Options{Redactor: checks.NewRedactor()})
	run, err := p.Load(runID)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Nodes) != 1 || len(run.Nodes[0].Logs) != 1 {
		t.Fatalf("nodes = %+v, want test with its log", run.Nodes)
	}
	n := run.Nodes[0]
	if want := "==== test session starts ====\nE       assert -1 == 5\n100%\n"; n.Logs[0].Text != want {
		t.Errorf("log on the page %q, want %q", n.Logs[0].Text, want)
	}
	if want := "tool_command exited with status 1: E       assert -1 == 5"; n.Reason != want {
		t.Errorf("reason on the page %q, want %q", n.Reason, want)
	}
	if b, err := os.ReadFile(filepath.Join(runsDir, runID, "nodes", "test", "stdout.log")); err != nil || string(b) != raw {
		t.Errorf("the raw log changed: %q, %v", b, err)
	}
}
