package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/runner/agent/agenttest"
)

// usageTurns is a model script whose calls report every kind of token:
// write hello.txt and the stage status file, then finish.
func usageTurns(shell shellTool) []agenttest.Turn {
	// The agent also writes the stage status file, as a pipeline's prompt
	// may ask: the verdict is the file's, the usage still the bot's.
	write := shell.turn(`echo hi > hello.txt && echo '{"status":"success","notes":"wrote hello.txt"}' > "$KILROY_STAGE_STATUS_PATH"`)
	write.InputTokens, write.OutputTokens, write.CacheReadTokens, write.CacheWriteTokens = 1234, 56, 7000, 890
	done := agenttest.Text("Created hello.txt. OUTCOME:SUCCESS")
	done.InputTokens, done.OutputTokens, done.CacheReadTokens = 321, 45, 8000
	return []agenttest.Turn{write, done}
}

// servedUsage is what the fake server reported in its answers, by kind.
func servedUsage(srv *agenttest.Server) attractor.Usage {
	s := srv.Served()
	return attractor.Usage{InputTokens: s.InputTokens, OutputTokens: s.OutputTokens,
		CacheReadTokens: s.CacheReadTokens, CacheWriteTokens: s.CacheWriteTokens}
}

func or64(v, def int64) int64 {
	if v != 0 {
		return v
	}
	return def
}

// stageUsage reads the usage of node's last attempt from its status.json.
func stageUsage(t *testing.T, runDir, node string) attractor.Usage {
	t.Helper()
	var st struct{ Usage *attractor.Usage }
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(runDir, "nodes", node, "status.json"))), &st); err != nil || st.Usage == nil {
		t.Fatalf("%s/status.json has no usage (%v)", node, err)
	}
	return *st.Usage
}

// checkpointUsage reads the run's total from checkpoint.json.
func checkpointUsage(t *testing.T, runDir string) attractor.UsageTotal {
	t.Helper()
	var cp struct{ Usage *attractor.UsageTotal }
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(runDir, "checkpoint.json"))), &cp); err != nil || cp.Usage == nil {
		t.Fatalf("checkpoint.json has no usage (%v)", err)
	}
	return *cp.Usage
}

// progressUsage sums the usage progress.ndjson gives the attempts.
func progressUsage(t *testing.T, runDir string) attractor.UsageTotal {
	t.Helper()
	var total attractor.UsageTotal
	for _, line := range strings.Split(strings.TrimSpace(readFile(t, filepath.Join(runDir, "progress.ndjson"))), "\n") {
		var ev struct {
			Type  string
			Usage *attractor.Usage
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Usage != nil {
			total.Add(*ev.Usage)
		}
	}
	return total
}

// price is the cost of u at a price of input, output, cache read and
// cache write dollars per million tokens, computed here on its own.
func price(u attractor.Usage, in, out, read, write float64) float64 {
	return (float64(u.InputTokens)*in + float64(u.OutputTokens)*out + float64(u.CacheReadTokens)*read + float64(u.CacheWriteTokens)*write) / 1e6
}

// The api backend over both protocols reports, per attempt and per run,
// exactly the tokens the fake server served by kind and their cost at the
// configured prices; the report and the terminal summary show them.
func TestAPIBackendUsage(t *testing.T) {
	for _, api := range []string{"anthropic", "openai"} {
		t.Run(api, func(t *testing.T) {
			turns := usageTurns(shellTool{"shell", "command"})
			srv := agenttest.New(t, turns...)
			dir := t.TempDir()
			agents := filepath.Join(dir, "agents.yml")
			base := srv.URL
			if api == "openai" {
				base += "/v1"
			}
			writeAgents(t, agents, "api", map[string]any{"kind": "api", "api": api, "base_url": base, "model": "fake-model",
				"key_env": "KILROY_TEST_MODEL_KEY",
				"prices":  map[string]any{"fake-*": map[string]any{"input": 3, "output": 15, "cache_read": 0.3, "cache_write": 3.75}}}, 0)
			t.Setenv("KILROY_TEST_MODEL_KEY", "sk-test-USAGEKEY0123456789")
			repo := newRepo(t, map[string]string{".kilroy/ci.dot": dotFor(`
  fix [shape=box, prompt="Create hello.txt containing hi"]
  check [shape=octagon, command="grep -q hi hello.txt"]
  start -> fix -> check -> exit`)})
			runDir := filepath.Join(dir, "run")
			code, stdout, stderr := runCmd("run", "--repo", repo, "--run-dir", runDir, "--data-dir", filepath.Join(dir, "data"),
				"--agents", agents, "--format", "markdown")
			if code != 0 {
				t.Fatalf("run: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			want := servedUsage(srv)
			want.Backend, want.Provider, want.Model = "api", map[string]string{"anthropic": "anthropic", "openai": "openai"}[api], "fake-model"
			want.CostUSD, want.CostSource = price(want, 3, 15, 0.3, 3.75), attractor.CostPriced
			got := stageUsage(t, runDir, "fix")
			if diff := cmp.Diff(got, want, floatNear()); diff != "" {
				t.Errorf("fix's usage in status.json (-got +want):\n%s", diff)
			}
			if b, err := os.ReadFile(filepath.Join(runDir, "nodes", "fix", "status.json")); err != nil || !strings.Contains(string(b), "wrote hello.txt") {
				t.Errorf("fix's status.json does not carry the notes of the status file the agent wrote (%v):\n%s", err, b)
			}
			var total attractor.UsageTotal
			total.Add(want)
			if diff := cmp.Diff(checkpointUsage(t, runDir), total, floatNear()); diff != "" {
				t.Errorf("checkpoint.json's usage (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(progressUsage(t, runDir), total, floatNear()); diff != "" {
				t.Errorf("progress.ndjson's usage (-got +want):\n%s", diff)
			}
			for _, s := range []string{"### Agent usage", attractor.Thousands(want.CacheReadTokens), attractor.USD(want.CostUSD)} {
				if !strings.Contains(stdout, s) {
					t.Errorf("the report lacks %q:\n%s", s, stdout)
				}
			}
			if _, err := os.Stat(filepath.Join(runDir, "report.md")); err != nil {
				t.Error(err)
			}
		})
	}
}

// floatNear compares costs to a billionth of a dollar: sums of float
// products differ in their last bits by the order of addition.
func floatNear() cmp.Option {
	return cmp.Comparer(func(a, b float64) bool { return a == b || (a-b < 1e-9 && b-a < 1e-9) })
}

// testPrice is the price every backend of the CLI matrix gets, per
// million tokens.
var testPrice = map[string]any{"input": 3, "output": 15, "cache_read": 0.3, "cache_write": 3.75}

// checkCLIUsage checks the fix node's usage after a case of the CLI
// matrix: the tokens the fake server served, by kind, and the cost the
// CLI reported (Claude Code: its stream's closing total_cost_usd) or the
// configured price gives.
func checkCLIUsage(t *testing.T, srv *agenttest.Server, c cliUnderTest, tc cliCase, runDir string) {
	t.Helper()
	got := stageUsage(t, runDir, "fix")
	want := servedUsage(srv)
	if diff := cmp.Diff([]int64{got.InputTokens, got.OutputTokens, got.CacheReadTokens, got.CacheWriteTokens},
		[]int64{want.InputTokens, want.OutputTokens, want.CacheReadTokens, want.CacheWriteTokens}); diff != "" {
		t.Errorf("fix's tokens [input output cache_read cache_write] (-got +want):\n%s", diff)
	}
	wantCost, wantSource := price(got, 3, 15, 0.3, 3.75), attractor.CostPriced
	if c.cli == "claude" && c.api == "" {
		wantCost, wantSource = claudeReportedCost(t, runDir), attractor.CostReported
	}
	if got.CostSource != wantSource || !floatEq(got.CostUSD, wantCost) {
		t.Errorf("fix's cost %v (%s), want %v (%s)", got.CostUSD, got.CostSource, wantCost, wantSource)
	}
	if total := checkpointUsage(t, runDir); total.Tokens() != got.Tokens() || !floatEq(total.CostUSD, got.CostUSD) {
		t.Errorf("checkpoint.json's total %+v does not match the one attempt %+v", total, got)
	}
	t.Logf("usage: %s (%s)", got, got.CostSource)
}

// claudeReportedCost is total_cost_usd of the closing result event in
// Claude Code's stream.
func claudeReportedCost(t *testing.T, runDir string) float64 {
	t.Helper()
	for _, line := range strings.Split(readFile(t, filepath.Join(runDir, "nodes", "fix", "agent.stdout.jsonl")), "\n") {
		var ev struct {
			Type string
			Cost *float64 `json:"total_cost_usd"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "result" && ev.Cost != nil {
			return *ev.Cost
		}
	}
	t.Fatal("Claude Code's stream has no result event with total_cost_usd")
	return 0
}

func floatEq(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// budgetCase is the budget case of the CLI matrix: every model call uses
// budgetCallTokens tokens and asks for another tool, for ever; the
// repository's limits.max_tokens allows budgetCalls of them and a half.
// The agent must stop within one call of the budget, fail
// budget_exhausted naming the key, and the work so far (hello.txt) reach
// the run branch.
func budgetCase(shell shellTool) cliCase {
	first := shell.turn("echo hi > hello.txt")
	more := shell.turn("echo more >> hello.txt")
	for _, t := range []*agenttest.Turn{&first, &more} {
		t.InputTokens, t.OutputTokens = budgetCallTokens-100, 100
	}
	limit := budgetCalls*budgetCallTokens + budgetCallTokens/2
	return cliCase{
		name: "budget", turns: []agenttest.Turn{first, more}, noRetry: true,
		config:      fmt.Sprintf("version: 1\nlimits:\n  max_tokens: %d\n", limit),
		wantClasses: []string{"budget_exhausted"}, wantRun: "budget_exhausted", wantReason: "limits.max_tokens",
		wantFile: "hello.txt", callsIn: [2]int{budgetCalls, budgetCalls + 1},
	}
}

const (
	budgetCallTokens = 1000
	budgetCalls      = 4
)

// A local run applies the per-run budgets of its --agents file over the
// repository's larger limits.max_tokens, says so on stderr, and names the
// file's key when the budget stops the agent.
func TestLocalAgentsFileBudget(t *testing.T) {
	c := budgetCase(shellTool{"shell", "command"})
	srv := agenttest.New(t, c.turns...)
	dir := t.TempDir()
	agents := filepath.Join(dir, "agents.yml")
	cfg := map[string]any{"agents": map[string]any{"default": "api",
		"backends": map[string]any{"api": map[string]any{"kind": "api", "api": "anthropic", "base_url": srv.URL, "model": "fake-model", "no_key": true}},
		"budgets":  map[string]any{"per_run_tokens": budgetCalls*budgetCallTokens + budgetCallTokens/2}}}
	data, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, agents, string(data)+"\n", 0o644)
	repo := newRepo(t, map[string]string{".kilroy/config.yml": "version: 1\nlimits:\n  max_tokens: 9000000\n", ".kilroy/ci.dot": dotFor(`
  fix [shape=box, prompt="Create hello.txt containing hi"]
  start -> fix -> exit`)})
	code, stdout, stderr := runCmd("run", "--repo", repo, "--run-dir", filepath.Join(dir, "run"), "--data-dir", filepath.Join(dir, "data"),
		"--agents", agents, "--format", "markdown")
	if code != 1 || !strings.Contains(stdout, "agents.budgets.per_run_tokens in "+agents) || !strings.Contains(stdout, "budget-limited") {
		t.Errorf("run: exit %d, want 1, budget-limited, naming the file's key\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "is above the budget in "+agents) {
		t.Errorf("stderr does not say the repository's max_tokens was lowered:\n%s", stderr)
	}
	if calls := srv.Calls(); calls < budgetCalls || calls > budgetCalls+1 {
		t.Errorf("%d model calls, want %d or %d", calls, budgetCalls, budgetCalls+1)
	}
}
