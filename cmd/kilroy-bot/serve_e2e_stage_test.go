package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/runner/agent/agenttest"
)

// servedStageScript is stageScript for a served run, whose run directory
// the test does not know in advance: the managed roots are where every
// jail shows them, /kilroy/managed-roots. tag tells apart two processes
// of one node (an agent and its verify_command).
func servedStageScript(tag string) string {
	return `set -e; [ "$(hostname)" = kilroy-sandbox ] || { echo UNJAILED >&2; exit 99; }; ` +
		`printf '{"status":"success"}' > "$KILROY_STAGE_STATUS_PATH"; ` +
		`echo ` + tag + ` > "$KILROY_STAGE_LOGS_DIR/mine-` + tag + `.log"; ` +
		`m=/kilroy/managed-roots; ` +
		`mkdir -p "$m/cache" && echo ` + tag + ` > "$m/cache/$KILROY_NODE_ID-` + tag + `"`
}

// A served pull request's pipeline has a node of every kind, each of
// which writes its stage directory (the status file, a log of its own)
// and a managed-root cache in the sandbox: a tool node first (cold jail),
// a verify node and a tool node (prewarmed jails), a command agent CLI
// with a verify_command, the API agent (fake model server) through its
// shell tool, and the exit node's verify_command. The run is green and
// every file is where the node wrote it.
func TestServeE2EStageDirInEveryNodeKind(t *testing.T) {
	needSandbox(t)
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-api03-E2ETESTKEY0123456789abcdefXYZ")
	srv := agenttest.New(t, agenttest.Tool("shell", map[string]any{"command": servedStageScript("api-shell")}),
		agenttest.Text("Done. OUTCOME:SUCCESS"))
	cli := filepath.Join(t.TempDir(), "agent.sh")
	writeFile(t, cli, "#!/bin/sh\n"+servedStageScript("cli-agent")+"\n", 0o755)
	policy := "agents:\n  default: local\n  backends:\n" +
		"    local: {kind: cli, cli: command, no_key: true, command: [" + dotQuote(cli) + ", \"{prompt_file}\"]}\n" +
		"    anthropic: {kind: api, api: anthropic, base_url: " + dotQuote(srv.URL) + ", model: fake-model}\n"
	dot := "digraph ci {\n  start [shape=Mdiamond]\n" +
		"  exit [shape=Msquare, verify_command=" + dotQuote(servedStageScript("verify-command")) + "]\n" +
		"  first [shape=parallelogram, tool_command=" + dotQuote(servedStageScript("tool")) + "]\n" +
		"  check [shape=octagon, command=" + dotQuote(servedStageScript("verify")) + "]\n" +
		"  second [shape=parallelogram, tool_command=" + dotQuote(servedStageScript("tool")) + "]\n" +
		"  agent [shape=box, prompt=\"Do the work\", verify_command=" + dotQuote(servedStageScript("verify-command")) + "]\n" +
		"  api [shape=box, prompt=\"Do the work\", llm_provider=anthropic]\n" +
		"  start -> first -> check -> second -> agent -> api -> exit\n}\n"
	e := newE2E(t, e2eOptions{policy: policy, files: map[string]string{"main.go": mainGo, ".kilroy/ci.dot": dot}})
	e.restart() // serve reads its environment (the API key) when it starts
	sha := e.repo.Commit(t, "feature-40", map[string]string{"notes.txt": "x\n"}, "a change")
	e.deliver("pull_request", e.openPR("opened", pr{number: 40, sha: sha, files: []string{"notes.txt"}}))
	e.waitSettled(sha, "kilroy/ci")
	e.waitIdle()
	sum := e.newestSummary(sha)
	if sum.Conclusion != "success" {
		t.Fatalf("kilroy/ci: %s, want success:\n%s", sum.Conclusion, sum.Summary)
	}
	run := filepath.Join(e.cfg.DataDir, "runs", runID(sum))
	want := map[string][]string{"first": {"tool"}, "check": {"verify"}, "second": {"tool"},
		"agent": {"cli-agent", "verify-command"}, "api": {"api-shell"}, "exit": {"verify-command"}}
	for node, tags := range want {
		for _, tag := range tags {
			if b, err := os.ReadFile(filepath.Join(run, "nodes", node, "mine-"+tag+".log")); strings.TrimSpace(string(b)) != tag {
				t.Errorf("%s's log of its %s in its stage directory: %q, %v", node, tag, b, err)
			}
			if b, err := os.ReadFile(filepath.Join(run, "policy-managed-roots", "cache", node+"-"+tag)); strings.TrimSpace(string(b)) != tag {
				t.Errorf("%s's managed-root cache file of its %s: %q, %v", node, tag, b, err)
			}
		}
	}
}
