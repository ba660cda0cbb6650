package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/runner/agent/agenttest"
)

// A served run's agent (the api backend against the fake model server,
// which keeps asking for tools) is stopped by the server's
// agents.budgets.per_run_tokens, which caps the repository's larger
// limits.max_tokens: the summary check fails budget-limited, says the
// repository's value was lowered, names the server's key, and shows the
// agent's usage; the run page shows it too, /metrics counts it, and the
// work so far is on the run branch.
func TestServeE2EAgentUsageAndBudget(t *testing.T) {
	needSandbox(t)
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-api03-E2EUSAGEKEY0123456789abcdefXYZ")
	step := func(cmd string) agenttest.Turn {
		turn := agenttest.Tool("shell", map[string]any{"command": cmd})
		turn.InputTokens, turn.OutputTokens = 900, 100
		return turn
	}
	srv := agenttest.New(t, step("echo hi > hello.txt"), step("echo more >> hello.txt"))
	const perRun = 4500 // four calls of 1000 tokens and a half
	policy := "agents:\n  default: anthropic\n  backends:\n" +
		"    anthropic: {kind: api, api: anthropic, base_url: " + dotQuote(srv.URL) + ", model: fake-model, " +
		"prices: {\"fake-*\": {input: 3, output: 15}}}\n" +
		fmt.Sprintf("  budgets: {per_run_tokens: %d}\n", perRun)
	dot := "digraph ci {\n  start [shape=Mdiamond]\n  exit [shape=Msquare]\n" +
		"  fix [shape=box, prompt=\"Write hello.txt\"]\n  start -> fix -> exit\n}\n"
	e := newE2E(t, e2eOptions{policy: policy, files: map[string]string{"main.go": mainGo, ".kilroy/ci.dot": dot,
		".kilroy/config.yml": "version: 1\nlimits:\n  max_tokens: 9000000\n"}})
	e.restart() // serve reads its environment (the API key) when it starts
	sha := e.repo.Commit(t, "feature-41", map[string]string{"notes.txt": "x\n"}, "a change")
	e.deliver("pull_request", e.openPR("opened", pr{number: 41, sha: sha, files: []string{"notes.txt"}}))
	e.waitSettled(sha, "kilroy/ci")
	e.waitIdle()
	sum := e.newestSummary(sha)
	if sum.Conclusion != "failure" || !strings.HasPrefix(sum.Title, "budget-limited") {
		t.Fatalf("kilroy/ci: %s %q, want a budget-limited failure:\n%s", sum.Conclusion, sum.Title, sum.Summary)
	}
	for _, want := range []string{"### Agent usage", "**Budget-limited:**", `per\_run\_tokens`, "above this server's budget"} {
		if !strings.Contains(sum.Summary, want) {
			t.Errorf("the summary lacks %q:\n%s", want, sum.Summary)
		}
	}
	if calls := srv.Calls(); calls < perRun/1000 || calls > perRun/1000+1 {
		t.Errorf("the model served %d calls; the budget allows %d and a half", calls, perRun/1000)
	}
	if u := strings.Index(sum.DetailsURL, "/runs/"); u < 0 {
		t.Errorf("no run page link in %q", sum.DetailsURL)
	} else if _, page := e.get(sum.DetailsURL[u:]); !strings.Contains(page, "<h2>Agent usage</h2>") {
		t.Errorf("the run page has no agent usage:\n%.2000s", page)
	}
	if _, m := e.get("/metrics"); !strings.Contains(m, "kilroy_agent_tokens_total{") || !strings.Contains(m, `pipeline="ci"`) {
		t.Errorf("/metrics has no agent usage:\n%.3000s", m)
	}
	branch := "kilroy/run/ci/" + strings.Split(runID(sum), "/")[0]
	if !strings.Contains(e.repo.Git(t, "ls-tree", "-r", "--name-only", branch), "hello.txt") {
		t.Errorf("the work so far (hello.txt) is not on the run branch")
	}
}
