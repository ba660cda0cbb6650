package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/runner/agent/agenttest"
)

// stageScript is what the node under test runs in each case of
// TestRunStageDirInEveryNodeKind: the stage status contract of
// docs/pipelines.md, a log file of its own in its logs directory, and a
// file in a cache under the run's policy-managed-roots, which every jail
// shows at /kilroy/managed-roots. It fails when any of them cannot be
// written, or outside the sandbox.
const stageScript = `set -e; [ "$(hostname)" = kilroy-sandbox ] || { echo UNJAILED >&2; exit 99; }; ` +
	`printf '{"status":"success"}' > "$KILROY_STAGE_STATUS_PATH"; ` +
	`echo "$KILROY_NODE_ID" > "$KILROY_STAGE_LOGS_DIR/mine.log"; ` +
	`mkdir -p /kilroy/managed-roots/cache && echo "$KILROY_NODE_ID" > /kilroy/managed-roots/cache/"$KILROY_NODE_ID"`

// stageCase is one node kind of TestRunStageDirInEveryNodeKind: the
// pipeline's nodes, given the script, and the agent backend it needs.
type stageCase struct {
	name string
	// node is the node under test (named n), or "" when the exit node
	// runs the script; warm puts a tool node before it, which has the
	// engine prewarm n's jail while it checkpoints that node (a tool or
	// verify node's; the first node's jail is cold).
	node func(script string) string
	exit func(script string) string
	warm bool
	// agent: "cli" runs the script as a command agent CLI, "api" as the
	// API agent's shell tool, "ok" is a command agent that only reports
	// success.
	agent string
}

// Every node kind of a sandboxed `kilroy-bot run` writes its stage
// directory (the status file, a log of its own) and a managed-root cache,
// in a cold jail and, where the engine prewarms one, a prewarmed jail.
// Before a5efb60 no sandboxed node had its stage directory: the status
// file failed with "No such file or directory".
func TestRunStageDirInEveryNodeKind(t *testing.T) {
	needSandbox(t)
	tool := func(s string) string { return `n [shape=parallelogram, tool_command=` + dotQuote(s) + `]` }
	verify := func(s string) string { return `n [shape=octagon, command=` + dotQuote(s) + `]` }
	box := func(string) string { return `n [shape=box, prompt="Do the work"]` }
	for _, tc := range []stageCase{
		{name: "tool, cold", node: tool},
		{name: "tool, prewarmed", node: tool, warm: true},
		{name: "verify, cold", node: verify},
		{name: "verify, prewarmed", node: verify, warm: true},
		{name: "verify_command on a box node", agent: "ok", node: func(s string) string {
			return `n [shape=box, prompt="Do the work", verify_command=` + dotQuote(s) + `]`
		}},
		{name: "verify_command on the exit node", exit: func(s string) string {
			return `exit [shape=Msquare, verify_command=` + dotQuote(s) + `]`
		}},
		{name: "agent CLI", agent: "cli", node: box},
		{name: "API agent's shell tool", agent: "api", node: box},
	} {
		t.Run(tc.name, func(t *testing.T) { runStageCase(t, tc) })
	}
}

func runStageCase(t *testing.T, tc stageCase) {
	dir := t.TempDir()
	runDir := filepath.Join(dir, "run")
	managed := filepath.Join(runDir, "policy-managed-roots")
	script := stageScript
	body, id := "", "exit"
	exitNode := `exit [shape=Msquare]`
	if tc.exit != nil {
		exitNode = tc.exit(script)
	}
	if tc.node != nil {
		id, body = "n", tc.node(script)+"\n  "
		if tc.warm {
			body += "w [shape=parallelogram, tool_command=\"true\"]\n  start -> w -> n -> exit"
		} else {
			body += "start -> n -> exit"
		}
	} else {
		body = "start -> exit"
	}
	dot := "digraph ci {\n  start [shape=Mdiamond]\n  " + exitNode + "\n  " + body + "\n}\n"
	repo := newRepo(t, map[string]string{".kilroy/ci.dot": dot})
	args := []string{"run", "--repo", repo, "--run-dir", runDir, "--data-dir", filepath.Join(dir, "data")}
	if tc.agent != "" {
		args = append(args, "--agents", stageAgents(t, dir, tc.agent, script))
	}
	code, stdout, stderr := runCmd(args...)
	if code != 0 {
		t.Fatalf("run exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if got := stageFiles(t, runDir)[filepath.Join(id, "mine.log")]; got != id+"\n" {
		t.Errorf("the node's own log in its stage directory: %q, want %q", got, id+"\n")
	}
	if b, err := os.ReadFile(filepath.Join(managed, "cache", id)); string(b) != id+"\n" {
		t.Errorf("the node's managed-root cache file: %q, %v", b, err)
	}
}

// stageAgents writes the agents file of a case and returns its path: a
// command agent CLI that runs script (kind "cli") or only reports success
// ("ok"), or the API agent against a fake model server whose one tool
// call runs script in the shell tool ("api").
func stageAgents(t *testing.T, dir, kind, script string) string {
	t.Helper()
	agents := filepath.Join(dir, "agents.yml")
	if kind == "api" {
		t.Setenv("ANTHROPIC_API_KEY", "sk-ant-api03-E2ETESTKEY0123456789abcdefXYZ")
		srv := agenttest.New(t, agenttest.Tool("shell", map[string]any{"command": script}), agenttest.Text("Done. OUTCOME:SUCCESS"))
		writeAgents(t, agents, "anthropic", map[string]any{"kind": "api", "api": "anthropic", "base_url": srv.URL, "model": "fake-model"}, 0)
		return agents
	}
	body := script
	if kind == "ok" {
		body = `printf '{"status":"success"}' > "$KILROY_STAGE_STATUS_PATH"`
	}
	cli := filepath.Join(dir, "agent.sh")
	writeFile(t, cli, "#!/bin/sh\n"+body+"\n", 0o755)
	writeAgents(t, agents, "local", map[string]any{"kind": "cli", "cli": "command", "no_key": true, "command": []string{cli, "{prompt_file}"}}, 0)
	return agents
}
