package agent

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/runner/agent/agenttest"
)

// A node that times out is transient_infra for every backend (DESIGN §6,
// docs/pipelines.md), whether the node's own timeout or the default
// agents.limits.timeout ends it, so retry edges guarded on the class route
// it as a timeout. Each CLI is a stand-in that starts its session the way
// the real one prints it (Claude's init and a tool call; Codex's thread
// and a started command; Gemini nothing until it ends) and then hangs.
func TestAgentTimeoutIsTransientForEveryBackend(t *testing.T) {
	hang := map[string]string{
		CLIClaude: `echo '{"type":"system","subtype":"init","session_id":"s1","model":"m"}'
echo '{"type":"assistant","message":{"content":[{"type":"text","text":"halfway there"},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"sleep 60"}}]}}'
exec sleep 60`,
		CLICodex: `echo '{"type":"thread.started","thread_id":"t"}'
echo '{"type":"turn.started"}'
echo '{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"halfway there"}}'
echo '{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"sleep 60","status":"in_progress"}}'
exec sleep 60`,
		CLIGemini:  `exec sleep 60`,
		CLICommand: `echo 'halfway there'; exec sleep 60`,
	}
	halfway := agenttest.Turn{Text: "halfway there", Calls: []agenttest.Call{{Name: "shell", Args: map[string]any{"command": "sleep 60"}}}}
	srv := agenttest.New(t, halfway)
	backends := []string{CLIClaude, CLICodex, CLIGemini, CLICommand, "api"}
	for _, name := range backends {
		for _, nodeTimeout := range []bool{true, false} {
			t.Run(name+map[bool]string{true: "/node timeout", false: "/agents.limits.timeout"}[nodeTimeout], func(t *testing.T) {
				var (
					cfg  Config
					deps Deps
				)
				if name == "api" {
					srv.Reset(halfway)
					cfg, deps = apiConfig(APIAnthropic, srv.URL), testDeps(t)
				} else {
					prog := name
					if name == CLICommand {
						prog = "slow-agent"
					}
					deps = fakeCLI(t, prog, hang[name])
					b := Backend{Kind: KindCLI, CLI: name, NoKey: true}
					if name == CLICommand {
						b.Command = []string{prog}
					}
					cfg = Config{Default: "b", Backends: map[string]Backend{"b": b}}
				}
				if cfg.Default == "" {
					cfg.Default = "b"
				}
				cfg.Limits.Timeout = Duration(time.Hour)
				attrs := `timeout="700ms"`
				if !nodeTimeout {
					cfg.Limits.Timeout, attrs = Duration(700*time.Millisecond), `auto_status=false`
				}
				a := newTestAgent(t, cfg, deps)
				p, ds, err := attractor.Load("t.dot", []byte(`digraph t {
					start [shape=Mdiamond]
					exit [shape=Msquare]
					fix [shape=box, prompt="Fix it", `+attrs+`]
					start -> fix -> exit
				}`))
				if err != nil {
					t.Fatalf("Load: %v\n%v", err, ds)
				}
				res, err := attractor.Run(t.Context(), p, attractor.RunConfig{
					RunID: "run1", Workspace: testWorktree(t), RunDir: t.TempDir(), Host: sandboxHost{deps}, Agent: a,
					Sleep: func(context.Context, time.Duration) error { return nil },
				})
				if err != nil {
					t.Fatal(err)
				}
				o := res.Outcomes["fix"]
				if o.FailureClass != attractor.ClassTransientInfra || !strings.Contains(o.FailureReason, "timed out") {
					t.Errorf("fix = %s %s: %s; want a transient_infra timeout", o.Status, o.FailureClass, o.FailureReason)
				}
			})
		}
	}
}
