package attractor

import (
	"context"
	"encoding/csv"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// wildDir is the collection of public pipelines written for other
// engines, read in place beside the checkout; tests skip without it.
func wildDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join("..", "..", "shared", "pipelines-in-the-wild")
	if _, err := os.Stat(filepath.Join(dir, "manifest.tsv")); err != nil {
		t.Skipf("pipelines in the wild not found beside the checkout (%v); they live in ../shared/pipelines-in-the-wild", err)
	}
	return dir
}

type wildRow struct{ file, verdict, why string }

func wildManifest(t *testing.T, dir string) []wildRow {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "manifest.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comma, r.LazyQuotes, r.FieldsPerRecord = '\t', true, -1
	var rows []wildRow
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("manifest.tsv: %v", err)
		}
		if len(rec) < 6 || rec[0] == "file" {
			continue
		}
		why := ""
		if len(rec) > 6 {
			why = rec[6]
		}
		rows = append(rows, wildRow{rec[0], rec[5], why})
	}
	return rows
}

// TestWildManifest validates every public pipeline and holds it to its
// verdict: accepted and false rows (valid where they were written) load
// with no error; correct and unsupported rows keep an error with a
// position.
func TestWildManifest(t *testing.T) {
	dir := wildDir(t)
	rows := wildManifest(t, dir)
	if len(rows) == 0 {
		t.Fatal("manifest.tsv lists no pipelines")
	}
	for _, row := range rows {
		t.Run(row.file, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(dir, row.file))
			if err != nil {
				t.Fatal(err)
			}
			_, ds, _ := Load(row.file, src)
			switch row.verdict {
			case "accepted", "false":
				if ds.HasErrors() {
					t.Errorf("%s row (%s) has errors:\n%s", row.verdict, row.why, formatDiags(ds.Errors()))
				}
			case "correct", "unsupported":
				positioned := false
				for _, d := range ds.Errors() {
					positioned = positioned || d.Line > 0 && d.Col > 0
				}
				if !positioned {
					t.Errorf("%s row (%s) has no error with a position:\n%s", row.verdict, row.why, formatDiags(ds))
				}
			default:
				t.Errorf("unknown verdict %q", row.verdict)
			}
		})
	}
}

// scriptedAgent plays a coding agent: for each node it writes the next
// status of its script to the stage status file, as a CLI agent would,
// and reports success. A node without a script succeeds.
type scriptedAgent struct {
	mu     sync.Mutex
	script map[string][]string // node ID → status file contents per call
	calls  map[string]int
}

func (a *scriptedAgent) Run(_ context.Context, req AgentRequest) (Outcome, error) {
	a.mu.Lock()
	steps := a.script[req.Node.ID]
	i := a.calls[req.Node.ID]
	a.calls[req.Node.ID]++
	a.mu.Unlock()
	status := `{"status":"success"}`
	if len(steps) > 0 {
		status = steps[min(i, len(steps)-1)]
	}
	if err := os.WriteFile(req.StageEnv[EnvStatusPath], []byte(status), 0o644); err != nil {
		return Outcome{}, err
	}
	return Outcome{Status: StatusSuccess}, nil
}

// TestWildRuns runs public pipelines whose steps are agent nodes through
// the scripted agent and checks each takes the route its author meant,
// failure routes included.
func TestWildRuns(t *testing.T) {
	dir := wildDir(t)
	const (
		ok       = `{"status":"success"}`
		testsRed = `{"status":"fail","failure_reason":"3 tests failed"}`
	)
	walkthrough := "2389-research__mammoth__docs__walkthrough.md__block2.dot"
	consensus := "danshapiro__kilroy__docs__strongdm__dot_specs__consensus_task.dot"
	for _, tc := range []struct {
		name, file string
		script     map[string][]string
		wantPath   []string
		wantStatus Status
		wantReason string
	}{
		{
			name: "repair loop: validate fails once, the diamond sends it back to implement",
			file: walkthrough, script: map[string][]string{"validate": {testsRed, ok}},
			wantPath:   []string{"start", "plan", "implement", "validate", "gate", "implement", "validate", "gate", "exit"},
			wantStatus: StatusSuccess,
		},
		{
			name: "repair loop: the same failure three times stops the run",
			file: walkthrough, script: map[string][]string{"validate": {testsRed}},
			wantPath: []string{"start", "plan", "implement", "validate", "gate", "implement", "validate", "gate",
				"implement", "validate"},
			wantStatus: StatusFail,
			wantReason: `node validate failed 3 times with the same failure signature "<n> tests failed"`,
		},
		{
			name: "whitespace-separated attributes, green",
			file: "2389-research__tracker__pipeline__testdata__simple.dot", script: nil,
			wantPath: []string{"start", "generate", "done"}, wantStatus: StatusSuccess,
		},
		{
			name: "a failing step before an unconditional edge to the exit is red",
			file: "2389-research__tracker__pipeline__testdata__simple.dot", script: map[string][]string{"generate": {testsRed}},
			wantPath: []string{"start", "generate"}, wantStatus: StatusFail,
			wantReason: "node generate failed: 3 tests failed",
		},
		{
			name:     "diamond after start routes success",
			file:     "2389-research__tracker__pipeline__testdata__diamond.dot",
			wantPath: []string{"start", "check", "pass_path", "done"}, wantStatus: StatusSuccess,
		},
		{
			name: "custom outcomes: needs_dod defines the DoD, yes exits",
			file: consensus, script: map[string][]string{
				"CheckDoD":        {`{"outcome":"needs_dod"}`},
				"ReviewConsensus": {`{"outcome":"yes"}`},
			},
			wantPath: []string{"Start", "CheckDoD", "DefineDoD_GPT", "ConsolidateDoD", "PlanGPT", "DebateConsolidate",
				"Implement", "ReviewGPT", "ReviewConsensus", "Exit"},
			wantStatus: StatusSuccess,
		},
		{
			name: "custom outcomes: has_dod goes straight to planning",
			file: consensus, script: map[string][]string{
				"CheckDoD":        {`{"outcome":"has_dod"}`},
				"ReviewConsensus": {`{"outcome":"yes"}`},
			},
			wantPath:   []string{"Start", "CheckDoD", "PlanGPT", "DebateConsolidate", "Implement", "ReviewGPT", "ReviewConsensus", "Exit"},
			wantStatus: StatusSuccess,
		},
		{
			name: "custom outcome no edge names ends the run naming it",
			file: consensus, script: map[string][]string{"CheckDoD": {`{"outcome":"maybe_dod"}`}},
			wantPath: []string{"Start", "CheckDoD"}, wantStatus: StatusFail,
			wantReason: `node CheckDoD finished with custom outcome "maybe_dod" and no edge names it`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(dir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			p := mustLoad(t, string(src))
			h := newHarness(t)
			h.cfg.Agent = &scriptedAgent{script: tc.script, calls: map[string]int{}}
			res := h.run(p)
			if diff := cmp.Diff(res.Completed, tc.wantPath); diff != "" {
				t.Errorf("path (-got +want):\n%s", diff)
			}
			if res.Status != tc.wantStatus || !strings.Contains(res.FailureReason, tc.wantReason) {
				t.Errorf("run = %s %q, want %s containing %q", res.Status, res.FailureReason, tc.wantStatus, tc.wantReason)
			}
		})
	}
}
