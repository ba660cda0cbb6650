package main

import (
	"encoding/json"
	"fmt"
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
	ev, err := lastEventOf(runDir)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func lastEventOf(runDir string) (lastEvent, error) {
	b, err := os.ReadFile(filepath.Join(runDir, "progress.ndjson"))
	if err != nil {
		return lastEvent{}, err
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	var ev lastEvent
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &ev); err != nil {
		return ev, fmt.Errorf("progress.ndjson's last line %q: %w", lines[len(lines)-1], err)
	}
	return ev, nil
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

// TestCheckpointJSONAfterSIGKILL: kilroy-bot is killed with SIGKILL in the
// middle of a node. checkpoint.json then shows the checkpoint before it,
// as the journal does; `resume` in a new process finishes the run, and
// checkpoint.json agrees with the journal again, showing every node, and
// progress.ndjson ends with run_completed.
func TestCheckpointJSONAfterSIGKILL(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "killed") // outside the worktree
	killOnce := "if [ ! -e " + marker + " ]; then touch " + marker + "; kill -9 $PPID; sleep 5; fi; echo k > k.txt"
	repo := newRepo(t, map[string]string{".kilroy/ci.dot": dotFor(`
  one [shape=parallelogram, tool_command="echo one > one.txt"]
  killer [shape=parallelogram, tool_command=` + dotQuote(killOnce) + `]
  two [shape=octagon, command="test -f one.txt && test -f k.txt"]
  start -> one -> killer -> two -> exit`)})
	runDir := filepath.Join(t.TempDir(), "run")

	// --no-sandbox: the killer node kills kilroy-bot itself, which no node
	// can do inside the sandbox.
	code, _, stderr := kilroyBot(t, "run", "--no-sandbox", "--repo", repo, "--run-dir", runDir)
	if code != -1 {
		t.Fatalf("first run exited %d, want killed by a signal\nstderr:\n%s", code, stderr)
	}
	got := checkCheckpointJSON(t, runDir, []string{"start", "one"})
	if got.CurrentNode != "one" {
		t.Errorf("checkpoint.json current_node at the kill = %q, want one", got.CurrentNode)
	}
	if last := readLastEvent(t, runDir); last.Type == "run_completed" || last.Type == "run_failed" {
		t.Errorf("progress.ndjson of the killed run ends with %s", last.Type)
	}

	code, stdout, stderr := kilroyBot(t, "resume", "--no-sandbox", runDir)
	if code != 0 {
		t.Fatalf("resume exited %d, want 0\nstderr:\n%s\nstdout:\n%s", code, stderr, stdout)
	}
	got = checkCheckpointJSON(t, runDir, []string{"start", "one", "killer", "two", "exit"})
	tip := gitT(t, repo, "rev-parse", got.Branch)
	if got.CurrentNode != "exit" || got.GitCommitSHA != tip || got.Context["outcome"] != "success" {
		t.Errorf("checkpoint.json after the resume: at %q, commit %s, outcome %v; want exit, the branch's tip %s, success",
			got.CurrentNode, got.GitCommitSHA, got.Context["outcome"], tip)
	}
	if diff := cmp.Diff(readLastEvent(t, runDir), lastEvent{Type: "run_completed", Status: "success"}); diff != "" {
		t.Errorf("progress.ndjson's last line after the resume (-got +want):\n%s", diff)
	}
}
