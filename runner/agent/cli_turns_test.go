package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// codexTool prints one tool call of `codex exec --json`, which leaves
// ran-ID in the stage directory before it completes.
func codexTool(id string) string {
	return `echo '{"type":"item.started","item":{"id":"` + id + `","type":"command_execution","command":"ls","aggregated_output":"","status":"in_progress"}}'
touch "$KILROY_STAGE_LOGS_DIR/ran-` + id + `"
echo '{"type":"item.completed","item":{"id":"` + id + `","type":"command_execution","command":"ls","aggregated_output":"a\n","exit_code":0,"status":"completed"}}'
`
}

// The bot holds Codex to agents.limits.max_turns from its event stream as
// Claude Code's --max-turns and Gemini's maxSessionTurns do: max_turns
// model calls, the first plus one per completed tool call; the tools the
// last call asked for run, and the CLI is stopped before it would ask the
// model again (here: before it writes asked-again). Messages, reasoning,
// plans and warnings are no tool calls.
func TestCodexTurnLimit(t *testing.T) {
	const askAgain = `sleep 30 # the next model call, which must not happen
touch "$KILROY_STAGE_LOGS_DIR/asked-again"
echo '{"type":"item.completed","item":{"id":"m","type":"agent_message","text":"late. OUTCOME:SUCCESS"}}'
`
	tests := []struct {
		name       string
		maxTurns   int
		script     string
		wantStatus attractor.Status
		wantClass  attractor.FailureClass
	}{
		{"within the limit", 2, codexTool("item_1") +
			`echo '{"type":"item.completed","item":{"id":"m","type":"agent_message","text":"done. OUTCOME:SUCCESS"}}'`,
			attractor.StatusSuccess, ""},
		{"past the limit", 2, `echo '{"type":"turn.started"}'
echo '{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"working on it"}}'
` + codexTool("item_1") + codexTool("item_2") + askAgain, attractor.StatusFail, attractor.ClassBudgetExhausted},
		{"parallel calls count each", 2, codexTool("item_1") + codexTool("item_2") + askAgain,
			attractor.StatusFail, attractor.ClassBudgetExhausted},
		{"no tool calls", 1, `echo '{"type":"item.completed","item":{"id":"e","type":"error","message":"Model metadata not found"}}'
echo '{"type":"item.completed","item":{"id":"r","type":"reasoning","text":"hmm"}}'
echo '{"type":"item.started","item":{"id":"p","type":"todo_list","items":[]}}'
echo '{"type":"item.completed","item":{"id":"p","type":"todo_list","items":[]}}'
echo '{"type":"item.completed","item":{"id":"m","type":"agent_message","text":"done. OUTCOME:SUCCESS"}}'`,
			attractor.StatusSuccess, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			deps := fakeCLI(t, "codex", tt.script)
			a := newTestAgent(t, Config{Backends: map[string]Backend{"b": {Kind: KindCLI, CLI: CLICodex}},
				Limits: Limits{MaxTurns: tt.maxTurns}}, deps)
			req := testRequest(t, testWorktree(t), "implement")
			o, err := a.Run(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]any{o.Status, o.FailureClass}, []any{tt.wantStatus, tt.wantClass}); diff != "" {
				t.Errorf("outcome (-got +want):\n%s\nreason: %s", diff, o.FailureReason)
			}
			if _, err := os.Stat(filepath.Join(req.StageDir, "asked-again")); err == nil {
				t.Errorf("codex went on past its turn limit")
			}
			if tt.wantClass == "" {
				return
			}
			if !strings.Contains(o.FailureReason, "turn limit (agents.limits.max_turns 2)") {
				t.Errorf("reason %q does not name the turn limit", o.FailureReason)
			}
			if tt.name == "past the limit" {
				if _, err := os.Stat(filepath.Join(req.StageDir, "ran-item_2")); err != nil {
					t.Errorf("the last turn's tools did not run: %v", err)
				}
				if o.Response != "working on it" {
					t.Errorf("response = %q, want what the agent said so far", o.Response)
				}
				if out := readFileT(t, filepath.Join(req.StageDir, "agent.stdout.jsonl")); !strings.Contains(out, `"id":"item_2"`) {
					t.Errorf("transcript lacks the last tool call:\n%s", out)
				}
			}
		})
	}
}

// eventHead reads the start of an event even when the line was cut short
// after it (a tool's long output), whatever the order of the fields.
func TestEventHead(t *testing.T) {
	tests := []struct{ line, want string }{
		{`{"type":"item.completed","item":{"id":"i1","type":"command_execution","aggregated_output":"x"}}`, "item.completed i1 command_execution"},
		{`{"type":"item.completed","item":{"id":"i1","type":"command_execution","aggregated_output":"xxxxx`, "item.completed i1 command_execution"},
		{`{"item":{"type":"file_change","changes":[{"path":"a"}],"id":"i2"},"type":"item.completed"}`, "item.completed i2 file_change"},
		{`{"type":"turn.completed","usage":{"input_tokens":1}}`, "turn.completed  "},
		{`{"type":"item.completed","item":{"aggregated_output":"cut`, "item.completed  "},
		{`not json`, "  "},
	}
	for _, tt := range tests {
		typ, id, it := eventHead([]byte(tt.line))
		if diff := cmp.Diff(typ+" "+id+" "+it, tt.want); diff != "" {
			t.Errorf("eventHead(%s) (-got +want):\n%s", tt.line, diff)
		}
	}
}
