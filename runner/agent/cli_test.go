package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// fakeCLI installs a bash script named name in a fresh bin directory and
// returns deps whose PATH finds it first.
func fakeCLI(t *testing.T, name, body string) Deps {
	t.Helper()
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/bash\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	deps := testDeps(t)
	deps.HostEnv["PATH"] = bin + ":" + deps.HostEnv["PATH"]
	return deps
}

// The fake Claude Code: saves its stdin, argv and environment in the stage
// directory, fixes main.go, writes the status file and prints a
// stream-json session with usage and cost.
const fakeClaude = `cat > "$KILROY_STAGE_LOGS_DIR/stdin.txt"
printf '%s\n' "$@" > "$KILROY_STAGE_LOGS_DIR/argv.txt"
env > .fake-env.txt # not in the stage directory, which is scrubbed of keys
sed -i 's/hello/fixed/' main.go
printf '{"status":"success"}' > "$KILROY_STAGE_STATUS_PATH"
echo '{"type":"system","subtype":"init","session_id":"s1","model":"claude-sonnet-4-5"}'
echo '{"type":"assistant","message":{"content":[{"type":"text","text":"Fixed it."}]}}'
echo '{"type":"result","subtype":"success","is_error":false,"result":"Fixed main.go.","num_turns":3,"total_cost_usd":0.0123,"usage":{"input_tokens":1000,"cache_read_input_tokens":200,"output_tokens":300}}'
echo "some progress" >&2
`

func TestClaudeCLI(t *testing.T) {
	deps := fakeCLI(t, "claude", fakeClaude)
	realHome := deps.HostEnv["HOME"]
	a := newTestAgent(t, Config{Backends: map[string]Backend{"claude": {Kind: KindCLI, CLI: CLIClaude}}}, deps)
	ws := testWorktree(t)
	req := testRequest(t, ws, "implement")
	req.Node.LLMModel = "claude-sonnet-4-5"
	o, err := a.Run(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != attractor.StatusSuccess || o.Response != "Fixed main.go." {
		t.Errorf("outcome = %+v", o)
	}
	if o.Meta["tokens_in"] != int64(1200) || o.Meta["tokens_out"] != int64(300) || o.Meta["cost_usd"] != 0.0123 || o.Meta["exit_code"] != 0 {
		t.Errorf("meta = %v", o.Meta)
	}
	if got := readFileT(t, filepath.Join(ws, "main.go")); !strings.Contains(got, "fixed") {
		t.Errorf("main.go not edited:\n%s", got)
	}
	stdin := readFileT(t, filepath.Join(req.StageDir, "stdin.txt"))
	for _, want := range []string{"KILROY_STAGE_STATUS_PATH", req.StageEnv[attractor.EnvStatusPath], `{"status":"success"}`, "Fix the bug in main.go."} {
		if !strings.Contains(stdin, want) {
			t.Errorf("prompt on stdin lacks %q:\n%s", want, stdin)
		}
	}
	argv := readFileT(t, filepath.Join(req.StageDir, "argv.txt"))
	if !strings.Contains(argv, "--output-format\nstream-json\n--verbose\n") || !strings.Contains(argv, "--model\nclaude-sonnet-4-5\n") {
		t.Errorf("argv:\n%s", argv)
	}
	env := parseEnv(readFileT(t, filepath.Join(ws, ".fake-env.txt")))
	wantEnv := map[string]string{
		"HOME": filepath.Join(req.StageDir, "home"), "CARGO_HOME": filepath.Join(realHome, ".cargo"),
		"GOPATH": filepath.Join(realHome, "go"), "ANTHROPIC_API_KEY": testAnthropicKey, "KILROY_NODE_ID": "implement",
	}
	for k, v := range wantEnv {
		if env[k] != v {
			t.Errorf("CLI sees %s=%q, want %q", k, env[k], v)
		}
	}
	for _, k := range []string{"CLAUDECODE", "OPENAI_API_KEY", "GITHUB_TOKEN", "KILROY_WEBHOOK_SECRET"} {
		if v, ok := env[k]; ok {
			t.Errorf("CLI sees %s=%s", k, v)
		}
	}
	for _, name := range []string{"agent.stdout.jsonl", "agent.stderr.log", "agent.json", "agent.prompt.md"} {
		if _, err := os.Stat(filepath.Join(req.StageDir, name)); err != nil {
			t.Errorf("stage record: %v", err)
		}
	}
	if got := readFileT(t, filepath.Join(req.StageDir, "agent.stderr.log")); got != "some progress\n" {
		t.Errorf("agent.stderr.log = %q", got)
	}
}

func TestCLIOutcomes(t *testing.T) {
	tests := []struct {
		name       string
		backend    Backend
		script     string // installed as the backend's program
		effort     string
		wantStatus attractor.Status
		wantClass  attractor.FailureClass
		wantReason []string
		wantMeta   map[string]any
	}{
		{
			name:    "codex with marker and usage",
			backend: Backend{Kind: KindCLI, CLI: CLICodex},
			effort:  "high",
			script: `printf '%s\n' "$@" > "$KILROY_STAGE_LOGS_DIR/argv.txt"
[ "$CODEX_API_KEY" = "` + testOpenAIKey + `" ] && [ -z "$OPENAI_API_KEY" ] || { echo "wrong key env" >&2; exit 9; }
grep -q model_reasoning_effort=high "$KILROY_STAGE_LOGS_DIR/argv.txt" || exit 8
echo '{"type":"thread.started","thread_id":"t"}'
echo '{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":4,"output_tokens":3}}'
echo '{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"All good. OUTCOME:SUCCESS"}}'
echo '{"type":"turn.completed","usage":{"input_tokens":5,"output_tokens":2}}'`,
			wantStatus: attractor.StatusSuccess,
			wantMeta:   map[string]any{"tokens_in": int64(15), "tokens_out": int64(5)},
		},
		{
			// Claude's stream-json always closes with a result event; exit 0
			// without one is a session cut short, not a finished one.
			name:    "claude exits 0 without its result event",
			backend: Backend{Kind: KindCLI, CLI: CLIClaude},
			script: `echo '{"type":"system","subtype":"init"}'
echo '{"type":"assistant","message":{"content":[{"type":"text","text":"working on it"}]}}'
exit 0`,
			wantStatus: attractor.StatusFail,
			wantClass:  attractor.ClassTransientInfra,
			wantReason: []string{"without finishing its session"},
		},
		{
			name:    "gemini error exit",
			backend: Backend{Kind: KindCLI, CLI: CLIGemini},
			script: `echo '{"response":"","stats":{"models":{"gemini-x":{"tokens":{"prompt":7,"candidates":1}}}},"error":{"type":"ApiError","message":"quota exceeded for ` + testGitHubToken + `"}}'
exit 1`,
			wantStatus: attractor.StatusFail,
			wantReason: []string{"gemini exited with code 1", "quota exceeded", "[REDACTED]"},
			wantMeta:   map[string]any{"tokens_in": int64(7), "tokens_out": int64(1)},
		},
		{
			name:    "claude 500 is transient",
			backend: Backend{Kind: KindCLI, CLI: CLIClaude},
			script: `echo '{"type":"result","subtype":"success","is_error":true,"result":"API Error: 500 {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"Internal server error\"}}"}'
exit 1`,
			wantStatus: attractor.StatusFail, wantClass: attractor.ClassTransientInfra,
			wantReason: []string{"claude exited with code 1: API Error: 500"},
		},
		{
			name:       "claude 401 is structural",
			backend:    Backend{Kind: KindCLI, CLI: CLIClaude},
			script:     `echo '{"type":"result","is_error":true,"result":"Invalid API key · Fix external API key"}'; echo 'API Error: 401 authentication_error' >&2; exit 1`,
			wantStatus: attractor.StatusFail, wantClass: attractor.ClassStructural,
		},
		{
			name:    "codex recovers from a dropped stream",
			backend: Backend{Kind: KindCLI, CLI: CLICodex},
			script: `echo '{"type":"turn.started"}'
echo '{"type":"error","message":"Reconnecting... 1/5 (stream disconnected before completion: error decoding response body)"}'
echo '{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"Done. OUTCOME:SUCCESS"}}'
echo '{"type":"turn.completed","usage":{"input_tokens":5,"output_tokens":2}}'`,
			wantStatus: attractor.StatusSuccess,
		},
		{
			name:    "codex gives up on a dropped stream",
			backend: Backend{Kind: KindCLI, CLI: CLICodex},
			script: `echo '{"type":"error","message":"Reconnecting... 5/5 (stream disconnected before completion: error decoding response body)"}'
echo '{"type":"turn.failed","error":{"message":"stream disconnected before completion: error decoding response body"}}'
exit 1`,
			wantStatus: attractor.StatusFail, wantClass: attractor.ClassTransientInfra,
			wantReason: []string{"codex exited with code 1: stream disconnected"},
		},
		{
			// Codex 0.169 names no status for a 5xx: it reconnects, then
			// gives up with its "high demand" message.
			name:    "codex gives up after reconnecting on 500s",
			backend: Backend{Kind: KindCLI, CLI: CLICodex},
			script: `echo '{"type":"turn.started"}'
echo '{"type":"error","message":"Reconnecting... 1/5 (We’re currently experiencing high demand, which may cause temporary errors.)"}'
echo '{"type":"error","message":"We’re currently experiencing high demand, which may cause temporary errors."}'
echo '{"type":"turn.failed","error":{"message":"We’re currently experiencing high demand, which may cause temporary errors."}}'
exit 1`,
			wantStatus: attractor.StatusFail, wantClass: attractor.ClassTransientInfra,
			wantReason: []string{"codex exited with code 1: We’re currently experiencing high demand"},
		},
		{
			// It reconnects on a 401 too; the status decides.
			name:    "codex gives up after reconnecting on 401s",
			backend: Backend{Kind: KindCLI, CLI: CLICodex},
			script: `echo '{"type":"error","message":"Reconnecting... 1/5 (unexpected status 401 Unauthorized: invalid x-api-key, url: http://127.0.0.1:9/v1/responses)"}'
echo '{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized: invalid x-api-key, url: http://127.0.0.1:9/v1/responses"}}'
exit 1`,
			wantStatus: attractor.StatusFail, wantClass: attractor.ClassStructural,
		},
		{
			name:    "gemini JSON error on stderr",
			backend: Backend{Kind: KindCLI, CLI: CLIGemini},
			script: `cat >&2 <<'J'
{
  "session_id": "s-1",
  "error": {
    "type": "Error",
    "message": "[API Error: got status: 400 Bad Request. {\"error\":{\"code\":400,\"message\":\"model not found\"}}]",
    "code": 1
  }
}
J
exit 1`,
			wantStatus: attractor.StatusFail, wantClass: attractor.ClassDeterministic,
			wantReason: []string{"gemini exited with code 1: [API Error: got status: 400 Bad Request."},
		},
		{
			// Before its JSON error the CLI prints stack traces and
			// objects of its own: the last object with an error decides.
			name:    "gemini JSON error after other output on stderr",
			backend: Backend{Kind: KindCLI, CLI: CLIGemini},
			script: `cat >&2 <<'J'
[Routing] NumericalClassifierStrategy failed: _ZodError: [
  {
    "code": "invalid_type",
    "message": "Required"
  }
]
Error when talking to Gemini API TypeError: terminated
    at Fetch.onAborted (node:internal/deps/undici/undici:11350:53) {
  [cause]: SocketError: other side closed
}
{
  "session_id": "s-1",
  "error": {
    "type": "Error",
    "message": "terminated",
    "code": 1
  }
}
J
exit 1`,
			wantStatus: attractor.StatusFail, wantClass: attractor.ClassTransientInfra,
			wantReason: []string{"gemini exited with code 1: terminated"},
		},
		{
			name:    "gemini turn limit",
			backend: Backend{Kind: KindCLI, CLI: CLIGemini},
			script: `cat >&2 <<'J'
{
  "session_id": "s-1",
  "error": {
    "type": "FatalTurnLimitedError",
    "message": "Reached max session turns for this session. Increase the number of turns by specifying maxSessionTurns in settings.json.",
    "code": 53
  }
}
J
exit 53`,
			wantStatus: attractor.StatusFail, wantClass: attractor.ClassBudgetExhausted,
			wantReason: []string{"turn limit"},
		},
		{
			name:       "claude turn limit",
			backend:    Backend{Kind: KindCLI, CLI: CLIClaude},
			script:     `echo '{"type":"result","subtype":"error_max_turns","is_error":true,"result":"","usage":{"input_tokens":1,"output_tokens":1}}'`,
			wantStatus: attractor.StatusFail, wantClass: attractor.ClassBudgetExhausted,
			wantReason: []string{"turn limit"},
		},
		{
			name:       "no verdict leaves it to the engine",
			backend:    Backend{Kind: KindCLI, CLI: CLICommand, NoKey: true, Command: []string{"myagent", "{prompt_file}", "{model_args}"}, ModelArgs: []string{"-m", "{model}"}},
			script:     `[ $# -eq 1 ] && grep -q "Fix the bug" "$1" && echo "did it"`,
			wantStatus: "",
		},
		{
			name:       "status file fail keeps the exit details",
			backend:    Backend{Kind: KindCLI, CLI: CLICommand, NoKey: true, Command: []string{"myagent"}},
			script:     `printf '{"status":"fail"}' > "$KILROY_STAGE_STATUS_PATH"; echo boom >&2; exit 2`,
			wantStatus: attractor.StatusFail, wantReason: []string{"myagent exited with code 2: boom"},
		},
		{
			name:       "not installed",
			backend:    Backend{Kind: KindCLI, CLI: CLICommand, NoKey: true, Command: []string{"no-such-agent-cli", "-p"}},
			wantStatus: attractor.StatusFail, wantClass: attractor.ClassStructural,
			wantReason: []string{"`no-such-agent-cli` not found", "agents.backends.b.command"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prog := tt.backend.Command
			name := map[string]string{CLICodex: "codex", CLIGemini: "gemini", CLIClaude: "claude"}[tt.backend.CLI]
			if len(prog) > 0 {
				name = prog[0]
			}
			deps := testDeps(t)
			if tt.script != "" {
				deps = fakeCLI(t, name, tt.script)
			}
			a := newTestAgent(t, Config{Backends: map[string]Backend{"b": tt.backend}}, deps)
			req := testRequest(t, testWorktree(t), "implement")
			req.Node.ReasoningEffort = tt.effort
			o, err := a.Run(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if o.Status != tt.wantStatus || o.FailureClass != tt.wantClass {
				t.Errorf("outcome = %s/%s %q; want %s/%s", o.Status, o.FailureClass, o.FailureReason, tt.wantStatus, tt.wantClass)
			}
			for _, w := range tt.wantReason {
				if !strings.Contains(o.FailureReason, w) {
					t.Errorf("reason lacks %q: %s", w, o.FailureReason)
				}
			}
			for k, v := range tt.wantMeta {
				if o.Meta[k] != v {
					t.Errorf("meta %s = %v, want %v", k, o.Meta[k], v)
				}
			}
		})
	}
}

// The node's deadline ends the CLI (the engine reports it); the
// configured default ends it with a transient failure of its own. Either
// way what the agent did so far is kept: agent.json and response.md.
func TestCLITimeouts(t *testing.T) {
	deps := fakeCLI(t, "slow", "echo 'halfway there'\nsleep 60\n")
	cfg := Config{Backends: map[string]Backend{"b": {Kind: KindCLI, CLI: CLICommand, NoKey: true, Command: []string{"slow"}}},
		Limits: Limits{Timeout: Duration(300 * time.Millisecond)}}
	a := newTestAgent(t, cfg, deps)

	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	req := testRequest(t, testWorktree(t), "n")
	if _, err := a.Run(ctx, req); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("with a node deadline: err = %v, want DeadlineExceeded", err)
	}
	checkKept(t, req.StageDir)
	req = testRequest(t, testWorktree(t), "n")
	o, err := a.Run(t.Context(), req)
	if err != nil || o.FailureClass != attractor.ClassTransientInfra || !strings.Contains(o.FailureReason, "timed out after 300ms") {
		t.Errorf("with the default timeout: %+v, %v", o, err)
	}
	if o.Response != "halfway there" {
		t.Errorf("response = %q, want what the agent printed", o.Response)
	}
	checkKept(t, req.StageDir)
}

// Gemini prints its JSON only when it ends: a Gemini session that times
// out keeps what the model said from the session file it writes as it
// goes under its HOME.
func TestGeminiTimeoutKeepsSession(t *testing.T) {
	deps := fakeCLI(t, "gemini", `d="$HOME/.gemini/tmp/worktree/chats"; mkdir -p "$d"
cat > "$d/session-1.jsonl" <<'J'
{"sessionId":"s","kind":"main"}
{"id":"u","type":"user","content":[{"text":"the prompt"}]}
{"id":"g1","type":"gemini","content":"halfway","model":"m"}
{"$set":{"lastUpdated":"t"}}
{"id":"g2","type":"gemini","content":"there","model":"m"}
J
sleep 60`)
	cfg := Config{Backends: map[string]Backend{"b": {Kind: KindCLI, CLI: CLIGemini}},
		Limits: Limits{Timeout: Duration(500 * time.Millisecond)}}
	a := newTestAgent(t, cfg, deps)
	req := testRequest(t, testWorktree(t), "n")
	o, err := a.Run(t.Context(), req)
	if err != nil || o.FailureClass != attractor.ClassTransientInfra || o.Response != "halfway\nthere" {
		t.Errorf("outcome %+v, %v; want a timeout keeping the model's text", o, err)
	}
	if got := readFileT(t, filepath.Join(req.StageDir, "response.md")); got != "halfway\nthere" {
		t.Errorf("response.md = %q", got)
	}
}

func checkKept(t *testing.T, stage string) {
	t.Helper()
	rec := readFileT(t, filepath.Join(stage, "agent.json"))
	if !strings.Contains(rec, `"timed_out": true`) {
		t.Errorf("agent.json does not say it timed out:\n%s", rec)
	}
	if got := readFileT(t, filepath.Join(stage, "response.md")); got != "halfway there" {
		t.Errorf("response.md = %q", got)
	}
}

func TestExpandArgv(t *testing.T) {
	b := Backend{Command: []string{"x", "--in={prompt_file}", "{effort_args}", "-C", "{workspace}"}, ModelArgs: []string{"-m", "{model}"}, EffortArgs: []string{"--effort", "{reasoning_effort}"}}
	vars := map[string]string{"{prompt_file}": "/s/p.md", "{workspace}": "/w", "{model}": "m1", "{reasoning_effort}": "low"}
	got := expandArgv(selection{b: b, model: "m1", effort: "low"}, vars, nil)
	want := "x --in=/s/p.md --effort low -C /w -m m1"
	if strings.Join(got, " ") != want {
		t.Errorf("argv = %q, want %q", got, want)
	}
	if got := expandArgv(selection{b: b}, vars, nil); strings.Join(got, " ") != "x --in=/s/p.md -C /w" {
		t.Errorf("argv without model and effort = %q", got)
	}
}

func parseEnv(s string) map[string]string {
	m := map[string]string{}
	for line := range strings.Lines(s) {
		if k, v, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "="); ok {
			m[k] = v
		}
	}
	return m
}

// An agent talked into printing its own key does not publish it: the
// response the engine writes to response.md is redacted.
func TestResponseRedacted(t *testing.T) {
	deps := fakeCLI(t, "leaky", `echo "my key is $ANTHROPIC_API_KEY. OUTCOME:SUCCESS"`)
	a := newTestAgent(t, Config{Backends: map[string]Backend{
		"b": {Kind: KindCLI, CLI: CLICommand, KeyEnv: "ANTHROPIC_API_KEY", Command: []string{"leaky"}},
	}}, deps)
	o, err := a.Run(t.Context(), testRequest(t, testWorktree(t), "n"))
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != attractor.StatusSuccess || o.Response != "my key is [REDACTED]. OUTCOME:SUCCESS" {
		t.Errorf("outcome = %+v", o)
	}
}
