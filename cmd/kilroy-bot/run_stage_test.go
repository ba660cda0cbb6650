package main

import (
	"os"
	"path/filepath"
	"testing"
)

// stageScript is what every node of TestRunStageDirInEveryNodeKind runs:
// the stage status contract of docs/pipelines.md, a log file of its own in
// its logs directory, and a file in a cache under the run's
// policy-managed-roots. It fails loudly when any of them cannot be written.
func stageScript(managed, node string) string {
	return `set -e; [ "$(hostname)" = kilroy-sandbox ] || { echo UNJAILED >&2; exit 99; }; printf '{"status":"success"}' > "$KILROY_STAGE_STATUS_PATH"; ` +
		`echo ` + node + ` > "$KILROY_STAGE_LOGS_DIR/mine.log"; ` +
		`mkdir -p ` + managed + `/cache && echo ` + node + ` > ` + managed + `/cache/` + node
}

// Every shell node kind of a sandboxed `kilroy-bot run` writes its stage
// directory (the status file, a log of its own) and a managed-root cache:
// a tool node first (its jail cold), then a verify node and a tool node
// (their jails prewarmed while the node before is checkpointed), and the
// exit node's verify_command. Before a5efb60 no sandboxed node had its
// stage directory, and the status file failed with "No such file or
// directory".
func TestRunStageDirInEveryNodeKind(t *testing.T) {
	runDir := filepath.Join(t.TempDir(), "run")
	managed := filepath.Join(runDir, "policy-managed-roots")
	nodes := []string{"first", "check", "second", "exit"}
	dot := "digraph ci {\n  start [shape=Mdiamond]\n" +
		"  exit [shape=Msquare, verify_command=" + dotQuote(stageScript(managed, "exit")) + "]\n" +
		"  first [shape=parallelogram, tool_command=" + dotQuote(stageScript(managed, "first")) + "]\n" +
		"  check [shape=octagon, command=" + dotQuote(stageScript(managed, "check")) + "]\n" +
		"  second [shape=parallelogram, tool_command=" + dotQuote(stageScript(managed, "second")) + "]\n" +
		"  start -> first -> check -> second -> exit\n}\n"
	repo := newRepo(t, map[string]string{".kilroy/ci.dot": dot})
	code, stdout, stderr := runCmd("run", "--repo", repo, "--run-dir", runDir)
	if code != 0 {
		t.Fatalf("run exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	files := stageFiles(t, runDir)
	for _, n := range nodes {
		if got := files[filepath.Join(n, "mine.log")]; got != n+"\n" {
			t.Errorf("node %s's own log in its stage directory: %q, want %q", n, got, n+"\n")
		}
		if b, err := os.ReadFile(filepath.Join(managed, "cache", n)); string(b) != n+"\n" {
			t.Errorf("node %s's managed-root cache file: %q, %v", n, b, err)
		}
	}
}
