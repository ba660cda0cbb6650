package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/runner"
)

// What tools written for the Attractor spec or for Kilroy read in a run
// directory: checkpoint.json's state fields and progress.ndjson's last
// line, through `run`, `resume` and (serve_e2e_files_test.go) `serve`.

// specCheckpoint is checkpoint.json as such a tool decodes it.
type specCheckpoint struct {
	CurrentNode    string                    `json:"current_node"`
	CompletedNodes []string                  `json:"completed_nodes"`
	NodeRetries    map[string]int            `json:"node_retries"`
	NodeOutcomes   map[string]map[string]any `json:"node_outcomes"`
	Context        map[string]any            `json:"context"`
	GitCommitSHA   string                    `json:"git_commit_sha"`
	Logs           []string                  `json:"logs"`
	CheckpointSeq  int                       `json:"checkpoint_seq"`
	RunID          string                    `json:"run_id"`
	Branch         string                    `json:"branch"`
}

func readSpecCheckpoint(t *testing.T, runDir string) specCheckpoint {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(runDir, "checkpoint.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cp specCheckpoint
	if err := json.Unmarshal(b, &cp); err != nil {
		t.Fatalf("checkpoint.json: %v", err)
	}
	return cp
}

// outcomeStatuses is each node's outcome status in cp.
func outcomeStatuses(cp specCheckpoint) map[string]any {
	m := map[string]any{}
	for id, o := range cp.NodeOutcomes {
		m[id] = o["status"]
	}
	return m
}

// checkCheckpointJSON checks checkpoint.json against the journal's last
// record as resume reads it, and the completed nodes against want.
func checkCheckpointJSON(t *testing.T, runDir string, want []string) specCheckpoint {
	t.Helper()
	got := readSpecCheckpoint(t, runDir)
	journal, err := runner.ReadCheckpoint(runDir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got.CompletedNodes, want); diff != "" {
		t.Errorf("checkpoint.json completed_nodes (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(got.CompletedNodes, journal.State.Completed); diff != "" {
		t.Errorf("checkpoint.json completed_nodes against the journal (-got +want):\n%s", diff)
	}
	wantStatus := map[string]any{}
	for id, o := range journal.State.Outcomes {
		wantStatus[id] = string(o.Status)
	}
	if diff := cmp.Diff(outcomeStatuses(got), wantStatus); diff != "" {
		t.Errorf("checkpoint.json node_outcomes against the journal (-got +want):\n%s", diff)
	}
	if got.CurrentNode != journal.State.CurrentNode || got.GitCommitSHA != journal.CommitSHA || got.CheckpointSeq != journal.Seq {
		t.Errorf("checkpoint.json at %s, commit %s, record %d; the journal's last is at %s, commit %s, record %d",
			got.CurrentNode, got.GitCommitSHA, got.CheckpointSeq, journal.State.CurrentNode, journal.CommitSHA, journal.Seq)
	}
	if got.Context["last_stage"] != journal.State.Context["last_stage"] || len(got.Context) != len(journal.State.Context) {
		t.Errorf("checkpoint.json context %v, the journal's %v", got.Context, journal.State.Context)
	}
	if got.Logs == nil || got.RunID != journal.RunID || got.Branch != journal.Branch {
		t.Errorf("checkpoint.json has logs %v, run %s on %s; want [] and run %s on %s", got.Logs, got.RunID, got.Branch, journal.RunID, journal.Branch)
	}
	return got
}

// lastEvent is progress.ndjson's last line.
type lastEvent struct {
	Type   string `json:"type"`
	Status string `json:"status"`
	Reason string `json:"reason"`
}

func readLastEvent(t *testing.T, runDir string) lastEvent {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(runDir, "progress.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	var ev lastEvent
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &ev); err != nil {
		t.Fatalf("progress.ndjson's last line %q: %v", lines[len(lines)-1], err)
	}
	return ev
}

// TestRunWritesSpecFiles: after `run` (sandboxed and not), checkpoint.json
// holds the run's state and progress.ndjson ends with the terminal event
// of a run that succeeded, failed or was canceled (by limits.run_timeout).
func TestRunWritesSpecFiles(t *testing.T) {
	status := `printf '{"status":"success","context_updates":{"greeting":"hello"}}' > "$KILROY_STAGE_STATUS_PATH"`
	for _, tc := range []struct {
		name      string
		check     string // the verify command
		config    string
		sandboxed bool
		wantCode  int
		completed []string
		statuses  map[string]any
		want      lastEvent
	}{
		{
			name: "success", check: "test -f built.txt",
			completed: []string{"start", "build", "check", "exit"},
			statuses:  map[string]any{"start": "success", "build": "success", "check": "success", "exit": "success"},
			want:      lastEvent{Type: "run_completed", Status: "success"},
		},
		{
			name: "success sandboxed", check: "test -f built.txt", sandboxed: true,
			completed: []string{"start", "build", "check", "exit"},
			statuses:  map[string]any{"start": "success", "build": "success", "check": "success", "exit": "success"},
			want:      lastEvent{Type: "run_completed", Status: "success"},
		},
		{
			name: "failure", check: "echo 'main.go:1: broken' >&2; exit 1", wantCode: 1,
			completed: []string{"start", "build", "check"},
			statuses:  map[string]any{"start": "success", "build": "success", "check": "fail"},
			want: lastEvent{Type: "run_failed", Status: "fail",
				Reason: "node check failed: verify command exited with status 1: main.go:1: broken"},
		},
		{
			name: "canceled by run_timeout", check: "sleep 30", wantCode: 1,
			// The run's deadline is set before start and build run, so it
			// passes before check's own 1s timeout. A canceled node is not
			// checkpointed: resume runs it again.
			config:    "version: 1\nlimits:\n  run_timeout: 1s\n  node_timeout: 1s\n",
			completed: []string{"start", "build"},
			statuses:  map[string]any{"start": "success", "build": "success"},
			want:      lastEvent{Type: "run_failed", Status: "canceled"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"--no-sandbox"}
			if tc.sandboxed {
				needSandbox(t)
				args = nil
			}
			files := map[string]string{".kilroy/ci.dot": dotFor(`
  build [shape=parallelogram, tool_command=` + dotQuote("echo built > built.txt && "+status) + `]
  check [shape=octagon, command=` + dotQuote(tc.check) + `]
  start -> build -> check -> exit`)}
			if tc.config != "" {
				files[".kilroy/config.yml"] = tc.config
			}
			repo := newRepo(t, files)
			runDir := filepath.Join(t.TempDir(), "run")
			code, _, stderr := runCmd(append([]string{"run", "--repo", repo, "--run-dir", runDir}, args...)...)
			if code != tc.wantCode {
				t.Fatalf("exit code %d, want %d\n%s", code, tc.wantCode, stderr)
			}
			got := checkCheckpointJSON(t, runDir, tc.completed)
			if diff := cmp.Diff(outcomeStatuses(got), tc.statuses); diff != "" {
				t.Errorf("node_outcomes statuses (-got +want):\n%s", diff)
			}
			if got.CurrentNode != tc.completed[len(tc.completed)-1] || got.Context["greeting"] != "hello" {
				t.Errorf("checkpoint.json current_node %q, context greeting %v; want %q, hello",
					got.CurrentNode, got.Context["greeting"], tc.completed[len(tc.completed)-1])
			}
			last := readLastEvent(t, runDir)
			if tc.want.Reason == "" && last.Status == "canceled" {
				if !strings.Contains(last.Reason, "limits.run_timeout of 1s reached") {
					t.Errorf("canceled run's reason %q does not name limits.run_timeout", last.Reason)
				}
				last.Reason = ""
			}
			if diff := cmp.Diff(last, tc.want); diff != "" {
				t.Errorf("progress.ndjson's last line (-got +want):\n%s", diff)
			}
		})
	}
}
