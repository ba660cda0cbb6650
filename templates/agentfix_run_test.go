package templates_test

import (
	"maps"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/runner"
	"github.com/kilroy-bot/kilroy-bot/runner/agent"
	"github.com/kilroy-bot/kilroy-bot/runner/agent/agenttest"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

// calcModule is a Go module whose Add subtracts, which its test catches.
var calcModule = map[string]string{
	"go.mod":       "module example.com/calc\n\ngo 1.22\n",
	"calc.go":      "package calc\n\n// Add returns a plus b.\nfunc Add(a, b int) int { return a - b }\n",
	"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Errorf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n",
}

// The agent-fix template runs end to end, with and without the node
// sandbox, its agent node on the bot's own api backend against the fake
// model server: an agent that fixes the code passes the test gate, and one
// that leaves the failing test failing fails the run at the test gate.
func TestAgentFixTemplateRuns(t *testing.T) { bothWays(t, testAgentFixTemplateRuns) }

func testAgentFixTemplateRuns(t *testing.T, sb *sandbox.Sandbox) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not on PATH: the agent-fix template's commands need the go command")
	}
	shell := func(cmd string) agenttest.Turn { return agenttest.Tool("shell", map[string]any{"command": cmd}) }
	runTests := shell("go test ./...")
	tests := []struct {
		name          string
		turns         []agenttest.Turn
		wantStatus    attractor.Status
		wantFailed    string
		wantCompleted []string
		wantReason    string // in the run's failure reason
	}{
		{
			name: "agent fixes the code",
			turns: []agenttest.Turn{
				runTests,
				agenttest.Tool("write_file", map[string]any{"path": "calc.go",
					"content": "package calc\n\n// Add returns a plus b.\nfunc Add(a, b int) int { return a + b }\n"}),
				runTests,
				agenttest.Text("Add subtracted; it adds now. OUTCOME:SUCCESS"),
			},
			wantStatus:    attractor.StatusSuccess,
			wantCompleted: []string{"start", "implement", "tests", "exit"},
		},
		// Each round goes back to the agent (a deterministic failure),
		// until the failure-signature breaker stops the unchanged failure.
		{
			name:       "test still fails",
			turns:      []agenttest.Turn{runTests, agenttest.Text("Looked at it. OUTCOME:SUCCESS")},
			wantStatus: attractor.StatusFail, wantFailed: "tests",
			wantCompleted: []string{"start", "implement", "tests", "check", "implement", "tests", "check", "implement", "tests"},
			wantReason:    "with the same failure signature",
		},
	}
	srv := agenttest.New(t, agenttest.Text("no case yet"))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.Reset(tt.turns...)
			host := sandbox.HostEnv()
			host["ANTHROPIC_API_KEY"] = "sk-ant-api03-TEMPLATETESTKEY0123456789abcdef"
			res := runGraph(t, sb, newRepo(t, "agent-fix", calcModule), "fix", host, apiAgent(srv.URL, host, sb))
			checkRun(t, res, tt.wantStatus, tt.wantFailed, tt.wantCompleted)
			if !strings.Contains(res.FailureReason, tt.wantReason) {
				t.Errorf("failure reason %q lacks %q", res.FailureReason, tt.wantReason)
			}
			if srv.Calls() == 0 {
				t.Errorf("the agent never called the model server")
			}
		})
	}
}

// apiAgent builds each run's agent on the bot's own api backend
// (Anthropic Messages) at url, as `kilroy-bot run --agents` does.
func apiAgent(url string, host map[string]string, _ *sandbox.Sandbox) runner.AgentFactory {
	cfg := agent.Config{
		Default:  "api",
		Backends: map[string]agent.Backend{"api": {Kind: agent.KindAPI, API: agent.APIAnthropic, BaseURL: url, Model: "fake-model"}},
		Limits:   agent.Limits{ProviderRetries: 1, RetryBackoff: agent.Duration(10 * time.Millisecond)},
	}
	return func(policyEnv map[string]string, managedRoots, caches string, sb *sandbox.Sandbox) (attractor.Agent, error) {
		return agent.New(cfg, agent.Deps{HostEnv: maps.Clone(host), Policy: policyEnv, Sandbox: sb, ManagedRoots: managedRoots, Caches: caches})
	}
}
