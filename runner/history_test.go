package runner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/internal/gittest"
)

// TestReadHistoryOfInterruptedRun reads back a run interrupted after node
// one's checkpoint: start and one as they ran, with the checkpoint the
// run resumes from and their stage directories.
func TestReadHistoryOfInterruptedRun(t *testing.T) {
	repo := gittest.NewRepo(t, map[string]string{".kilroy/ci.dot": pipeline(`
  one [shape=parallelogram, tool_command="echo one > one.txt"]
  two [shape=parallelogram, tool_command="echo two > two.txt"]
  start -> one -> two -> exit`)})
	first := interruptedRun(t, localOptions(t, repo))
	cp, err := ReadCheckpoint(string(first.Dir))
	if err != nil {
		t.Fatal(err)
	}
	h, err := ReadHistory(string(first.Dir))
	if err != nil {
		t.Fatalf("ReadHistory: %v", err)
	}
	finished := map[string]int64{}
	for _, ev := range readProgress(t, first.Dir) {
		if ev.Type == "node_finished" {
			finished[ev.Node] += ev.DurationMS
		}
	}
	// The outcomes are checkpoint.json's, which has more than the status.
	want := &History{
		Nodes: []NodeHistory{
			{ID: "start", Visits: 1, Attempts: 1, Duration: time.Duration(finished["start"]) * time.Millisecond, Outcome: cp.State.Outcomes["start"],
				CheckpointSHA: gittest.Git(t, repo, "rev-parse", cp.CommitSHA+"^"), Dir: filepath.Join(first.Dir.Nodes(), "start")},
			{ID: "one", Visits: 1, Attempts: 1, Duration: time.Duration(finished["one"]) * time.Millisecond, Outcome: cp.State.Outcomes["one"],
				CheckpointSHA: cp.CommitSHA, Dir: filepath.Join(first.Dir.Nodes(), "one")},
		},
		Edges: []EdgeHistory{{From: "start", To: "one", Method: attractor.ByWeight}, {From: "one", To: "two", Method: attractor.ByWeight}},
	}
	if diff := cmp.Diff(h, want); diff != "" {
		t.Errorf("history (-got +want):\n%s", diff)
	}
}

// TestReadHistoryKeepsCheckpointedWork reads a progress.ndjson of two
// interrupted executions: the first killed inside a parallel node, the
// second, which resumed before that node, killed after the fan-out. Only
// work a resume does not do again counts: the first execution's branch,
// though checkpointed, was run again; and a line torn by the kill is
// skipped.
func TestReadHistoryKeepsCheckpointedWork(t *testing.T) {
	d := RunDir(t.TempDir())
	if err := os.MkdirAll(filepath.Join(d.Nodes(), "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	evs := []event{
		{Type: "run_started"},
		{Type: "node_started", Node: "start"},
		{Type: "node_finished", Node: "start", Attempt: 1, Status: "success"},
		{Type: "checkpoint", Node: "start", SHA: "s1"},
		{Type: "edge_selected", From: "start", To: "a", Method: "lexical"},
		{Type: "node_started", Node: "a"},
		{Type: "attempt_finished", Node: "a", Attempt: 1, Status: "retry", Reason: "flaky", DurationMS: 100},
		{Type: "node_finished", Node: "a", Attempt: 2, Status: "success", DurationMS: 200},
		{Type: "checkpoint", Node: "a", SHA: "a1"},
		{Type: "edge_selected", From: "a", To: "par", Method: "condition"},
		{Type: "node_started", Node: "par"},
		{Type: "node_started", Node: "b1"},
		{Type: "node_finished", Node: "b1", Attempt: 1, Status: "success", DurationMS: 50},
		{Type: "checkpoint", Node: "b1", SHA: "b1-old"},

		{Type: "run_started"},
		{Type: "node_started", Node: "par"},
		{Type: "node_started", Node: "b1"},
		{Type: "node_finished", Node: "b1", Attempt: 1, Status: "success", DurationMS: 60},
		{Type: "checkpoint", Node: "b1", SHA: "b1"},
		{Type: "node_started", Node: "b2"},
		{Type: "node_finished", Node: "b2", Attempt: 1, Status: "fail", FailureClass: "deterministic", Reason: "exit 1", DurationMS: 70},
		{Type: "checkpoint", Node: "b2", SHA: "b2"},
		{Type: "node_finished", Node: "par", Attempt: 1, Status: "partial_success", DurationMS: 150},
		{Type: "checkpoint", Node: "par", SHA: "p1"},
		{Type: "edge_selected", From: "par", To: "fan", Method: "fan_in"},
		{Type: "node_started", Node: "fan"},
	}
	var data []byte
	for _, ev := range evs {
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		data = append(append(data, b...), '\n')
	}
	data = append(data, `{"time":"2025-01-01T00:00:00Z","type":"node_fini`...)
	if err := os.WriteFile(d.Progress(), data, 0o644); err != nil {
		t.Fatal(err)
	}
	// The state has a's notes, which progress.ndjson leaves out; its
	// outcome of par is from another visit, so progress.ndjson's stays.
	st := &attractor.State{Outcomes: map[string]attractor.Outcome{
		"a":   {Status: attractor.StatusSuccess, Notes: "built 3 packages"},
		"par": {Status: attractor.StatusFail},
	}}
	h, err := readHistory(d, st)
	if err != nil {
		t.Fatal(err)
	}
	want := &History{
		Nodes: []NodeHistory{
			{ID: "start", Visits: 1, Attempts: 1, Outcome: attractor.Outcome{Status: attractor.StatusSuccess}, CheckpointSHA: "s1"},
			{ID: "a", Visits: 1, Attempts: 2, Duration: 300 * time.Millisecond, CheckpointSHA: "a1", Dir: filepath.Join(d.Nodes(), "a"),
				Outcome: attractor.Outcome{Status: attractor.StatusSuccess, Notes: "built 3 packages"}},
			{ID: "par", Visits: 1, Attempts: 1, Duration: 150 * time.Millisecond, CheckpointSHA: "p1",
				Outcome: attractor.Outcome{Status: attractor.StatusPartialSuccess}},
			{ID: "b1", Visits: 1, Attempts: 1, Duration: 60 * time.Millisecond, CheckpointSHA: "b1",
				Outcome: attractor.Outcome{Status: attractor.StatusSuccess}},
			{ID: "b2", Visits: 1, Attempts: 1, Duration: 70 * time.Millisecond, CheckpointSHA: "b2",
				Outcome: attractor.Outcome{Status: attractor.StatusFail, FailureClass: attractor.ClassDeterministic, FailureReason: "exit 1"}},
		},
		Edges: []EdgeHistory{
			{From: "start", To: "a", Method: attractor.ByLexical},
			{From: "a", To: "par", Method: attractor.ByCondition},
			{From: "par", To: "fan", Method: attractor.ByFanIn},
		},
	}
	if diff := cmp.Diff(h, want); diff != "" {
		t.Errorf("history (-got +want):\n%s", diff)
	}
}
