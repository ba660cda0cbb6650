package agent

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// A pipeline plan → implement → verify run by the engine with this agent:
// the fake agent always reports success through the status file, but only
// the verify node's check, run without any LLM, decides whether the run
// passes (trustless verification, seed 003).
func TestPipelineVerifiesAgentClaims(t *testing.T) {
	const pipeline = `digraph ship {
		graph [goal="Make main.go greet the world"]
		start [shape=Mdiamond]
		exit [shape=Msquare]
		plan [shape=box, prompt="Plan how to $goal"]
		implement [shape=box, prompt="Implement: $goal"%s]
		verify [shape=octagon, command="grep -q 'Hello, world' main.go"]
		start -> plan -> implement -> verify -> exit
	}`
	// The agent claims success whatever it did; with FIX=1 it also does the work.
	const agentScript = `if [ "$KILROY_NODE_ID" = implement ] && [ -n "$FIX" ]; then sed -i 's/hello/Hello, world/' main.go; fi
echo "// touched by $KILROY_NODE_ID" >> main.go
printf '{"status":"success"}' > "$KILROY_STAGE_STATUS_PATH"
echo "done, all good"`
	tests := []struct {
		name       string
		fix        bool
		nodeExtra  string // attributes added to implement
		wantStatus attractor.Status
		wantFailed string
		wantReason string
	}{
		{name: "agent lies, verify node fails the run", wantStatus: attractor.StatusFail, wantFailed: "verify", wantReason: "exit"},
		{name: "agent lies, verify_command fails the node", nodeExtra: `, verify_command="grep -q 'Hello, world' main.go"`,
			wantStatus: attractor.StatusFail, wantFailed: "implement", wantReason: "verify_command"},
		{name: "agent does the work", fix: true, wantStatus: attractor.StatusSuccess},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			deps := fakeCLI(t, "fake-agent", agentScript)
			env := map[string]string{}
			if tt.fix {
				env["FIX"] = "1"
			}
			a := newTestAgent(t, Config{Default: "fake", Backends: map[string]Backend{
				"fake": {Kind: KindCLI, CLI: CLICommand, NoKey: true, Command: []string{"fake-agent"}, Env: env},
			}}, deps)
			p, ds, err := attractor.Load("ship.dot", []byte(strings.Replace(pipeline, "%s", tt.nodeExtra, 1)))
			if err != nil {
				t.Fatalf("Load: %v\n%v", err, ds)
			}
			ws, runDir := testWorktree(t), t.TempDir()
			res, err := attractor.Run(t.Context(), p, attractor.RunConfig{
				RunID: "run1", Workspace: ws, RunDir: runDir, Host: sandboxHost{deps}, Agent: a,
				Sleep: func(context.Context, time.Duration) error { return nil },
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tt.wantStatus || res.FailedNode != tt.wantFailed || !strings.Contains(res.FailureReason, tt.wantReason) {
				t.Errorf("run = %s at %q: %s; want %s at %q containing %q", res.Status, res.FailedNode, res.FailureReason, tt.wantStatus, tt.wantFailed, tt.wantReason)
			}
			t.Logf("run: %s at %q: %s", res.Status, res.FailedNode, res.FailureReason)
			if o := res.Outcomes["plan"]; o.Status != attractor.StatusSuccess || o.Meta["agent_backend"] != "fake" {
				t.Errorf("plan outcome = %+v", o)
			}
			if got := readFileT(t, filepath.Join(runDir, "plan", "response.md")); got != "done, all good" {
				t.Errorf("plan/response.md = %q", got)
			}
			if got := readFileT(t, filepath.Join(ws, "main.go")); !strings.Contains(got, "touched by implement") {
				t.Errorf("the agent did not run in the worktree:\n%s", got)
			}
		})
	}
}
