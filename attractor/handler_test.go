package attractor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kilroy-bot/kilroy-bot/attractor/findings"
)

// fakeAgent answers codergen nodes with a fixed outcome and records what
// it was asked.
type fakeAgent struct {
	out  Outcome
	err  error
	reqs []AgentRequest
}

func (a *fakeAgent) Run(_ context.Context, req AgentRequest) (Outcome, error) {
	a.reqs = append(a.reqs, req)
	return a.out, a.err
}

// runOne runs start -> node -> done and returns the node's outcome.
func runOne(t *testing.T, h *harness, node string, types ...string) (Outcome, *RunResult) {
	t.Helper()
	id := strings.Fields(node)[0]
	p := loadAnyway(t, fmt.Sprintf(`digraph t {
		goal="ship the feature"
		start [shape=Mdiamond]; done [shape=Msquare]
		%s
		start -> %s
		%s -> done [condition="outcome=success"]
		%s -> done [condition="outcome=fail"]
	}`, node, id, id, id))
	if len(types) > 0 {
		p = mustLoad(t, fmt.Sprintf(`digraph t { start [shape=Mdiamond]; done [shape=Msquare]; %s; start -> %s -> done }`, node, id), types...)
	}
	res := h.run(p)
	return res.Outcomes[id], res
}

func TestToolHandler(t *testing.T) {
	for _, tc := range []struct {
		name, node string
		want       Outcome
	}{
		{
			name: "exit status is a deterministic failure with the output tail",
			node: `t [shape=parallelogram, tool_command="echo compiling; echo 'main.go:3: undefined: x' >&2; exit 3"]`,
			want: Outcome{Status: StatusFail, FailureClass: ClassDeterministic,
				FailureReason:  "tool_command exited with status 3: compiling\nmain.go:3: undefined: x",
				ContextUpdates: map[string]any{"tool.output": "compiling\n", "tool.exit_status": 3, "tool_stdout": "compiling"}},
		},
		{
			name: "timeout is transient_infra naming the limit",
			node: `t [shape=parallelogram, timeout="300ms", tool_command="sleep 30"]`,
			want: Outcome{Status: StatusFail, FailureClass: ClassTransientInfra,
				FailureReason:  "tool_command timed out after 300ms (node timeout; raise it with timeout=…)",
				ContextUpdates: map[string]any{"tool.output": "", "tool.exit_status": -1, "tool_stdout": ""}},
		},
		{
			name: "missing tool_command",
			node: `t [shape=parallelogram]`,
			want: Outcome{Status: StatusFail, FailureClass: ClassStructural,
				FailureReason: `tool node t has no tool_command: add tool_command="…" with the shell command to run`},
		},
		{
			name: "success",
			node: `t [shape=parallelogram, tool_command="printf ok"]`,
			want: Outcome{Status: StatusSuccess, ContextUpdates: map[string]any{"tool.output": "ok", "tool.exit_status": 0, "tool_stdout": "ok"}},
		},
		{
			name: "tool_stdout is trimmed, as tracker and Kilroy conditions expect",
			node: `t [shape=parallelogram, tool_command="echo '  has_findings'"]`,
			want: Outcome{Status: StatusSuccess, ContextUpdates: map[string]any{"tool.output": "  has_findings\n", "tool.exit_status": 0, "tool_stdout": "has_findings"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := runOne(t, newHarness(t), tc.node)
			got.FailureSignature = ""
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("outcome (-got +want):\n%s", diff)
			}
		})
	}
}

func TestVerifyHandler(t *testing.T) {
	h := newHarness(t)
	if err := os.WriteFile(filepath.Join(h.workspace, "go.mod"), []byte("module example.test/m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _ := runOne(t, h, `v [shape=octagon, command="echo './pkg/a.go:12:5: undefined: Foo' >&2; echo '/etc/passwd:1:1: outside' >&2; exit 1"]`)
	want := []findings.Finding{{Path: "pkg/a.go", Line: 12, Column: 5, Level: findings.LevelError, Message: "undefined: Foo", Tool: findings.ToolGo}}
	if diff := cmp.Diff(got.Findings, want); diff != "" {
		t.Errorf("findings (-got +want):\n%s", diff)
	}
	if got.Status != StatusFail || got.FailureClass != ClassDeterministic || !strings.Contains(got.FailureReason, "verify command exited with status 1") {
		t.Errorf("outcome = %s %s %q", got.Status, got.FailureClass, got.FailureReason)
	}

	missing, _ := runOne(t, newHarness(t), `v [shape=octagon]`)
	if missing.FailureClass != ClassStructural || !strings.Contains(missing.FailureReason, `add command="…"`) {
		t.Errorf("missing command: %s %q", missing.FailureClass, missing.FailureReason)
	}
}

func TestVerifyCommandOverridesSuccess(t *testing.T) {
	const bad = `verify_command="echo 'still broken' >&2; exit 4"`
	const good = `verify_command="true"`
	agent := func() *fakeAgent { return &fakeAgent{out: Outcome{Status: StatusSuccess, Response: "done"}} }
	for _, tc := range []struct {
		name, src, node string
	}{
		{"box", `impl [shape=box, %s]; start -> impl -> done`, "impl"},
		{"diamond", `check [shape=diamond, %s]; start -> check -> done`, "check"},
		{"exit", `start -> done; done [%s]`, "done"},
		{"fan-in", `fan [shape=component]; a [shape=parallelogram, tool_command="true"]; join [shape=tripleoctagon, %s]
			start -> fan -> a -> join -> done`, "join"},
	} {
		for _, v := range []struct {
			verify string
			want   Status
		}{{bad, StatusFail}, {good, StatusSuccess}} {
			t.Run(tc.name+" "+string(v.want), func(t *testing.T) {
				h := newHarness(t)
				h.cfg.Agent = agent()
				body := fmt.Sprintf(tc.src, v.verify)
				res := h.run(mustLoad(t, "digraph t { start [shape=Mdiamond]; done [shape=Msquare]\n"+body+"\n}"))
				o := res.Outcomes[tc.node]
				if o.Status != v.want {
					t.Fatalf("%s status = %s (%s), want %s", tc.node, o.Status, o.FailureReason, v.want)
				}
				if v.want == StatusFail {
					if want := "verify_command exited with status 4: still broken"; o.FailureReason != want {
						t.Errorf("reason = %q, want %q", o.FailureReason, want)
					}
					if res.Status != StatusFail {
						t.Errorf("run status = %s, want fail", res.Status)
					}
					if got := h.stageFile(tc.node, "verify.stderr.log"); got != "still broken\n" {
						t.Errorf("verify.stderr.log = %q", got)
					}
				}
			})
		}
	}
}

func TestCodergenHandler(t *testing.T) {
	t.Run("prompt, agent, response", func(t *testing.T) {
		h := newHarness(t)
		a := &fakeAgent{out: Outcome{Status: StatusSuccess, Response: "I did it"}}
		h.cfg.Agent = a
		got, _ := runOne(t, h, `impl [shape=box, prompt="Implement: $goal"]`)
		if got.Status != StatusSuccess {
			t.Fatalf("status = %s (%s)", got.Status, got.FailureReason)
		}
		files := []string{h.stageFile("impl", "prompt.md"), h.stageFile("impl", "response.md")}
		if diff := cmp.Diff(files, []string{"Implement: ship the feature", "I did it"}); diff != "" {
			t.Errorf("prompt.md, response.md (-got +want):\n%s", diff)
		}
		req := a.reqs[0]
		if req.Prompt != "Implement: ship the feature" || req.Workspace != h.workspace || req.StageEnv[EnvNodeID] != "impl" {
			t.Errorf("agent request = %+v", req)
		}
	})
	t.Run("agent status file wins", func(t *testing.T) {
		h := newHarness(t)
		h.cfg.Agent = agentFunc(func(req AgentRequest) (Outcome, error) {
			err := os.WriteFile(req.StageEnv[EnvStatusPath], []byte(`{"outcome":"fail","failure_reason":"tests still red"}`), 0o644)
			return Outcome{Status: StatusSuccess}, err
		})
		got, _ := runOne(t, h, `impl [shape=box]`)
		if got.Status != StatusFail || got.FailureReason != "tests still red" {
			t.Errorf("outcome = %s %q, want the status file's fail", got.Status, got.FailureReason)
		}
	})
	for _, tc := range []struct {
		name  string
		agent Agent
		node  string
		want  Outcome
	}{
		{"no agent configured", nil, `impl [shape=box]`, Outcome{Status: StatusFail, FailureClass: ClassStructural,
			FailureReason: "node impl needs a coding agent and none is configured: set agents in the kilroy-bot config, or give the node shape=parallelogram with tool_command if it runs a command"}},
		{"agent error", &fakeAgent{err: errors.New("429 rate limit")}, `impl [shape=box]`,
			Outcome{Status: StatusFail, FailureClass: ClassTransientInfra, FailureReason: "agent failed: 429 rate limit"}},
		{"no status without auto_status", &fakeAgent{}, `impl [shape=box]`, Outcome{Status: StatusFail, FailureClass: ClassDeterministic,
			FailureReason: "the agent finished without reporting a status: have it write $KILROY_STAGE_STATUS_PATH, or set auto_status=true on the node"}},
		{"auto_status", &fakeAgent{}, `impl [shape=box, auto_status=true]`, Outcome{Status: StatusSuccess,
			Notes: "auto-status: the agent finished without reporting a status"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.cfg.Agent = tc.agent
			got, _ := runOne(t, h, tc.node)
			got.FailureSignature = ""
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("outcome (-got +want):\n%s", diff)
			}
		})
	}
}

type agentFunc func(AgentRequest) (Outcome, error)

func (f agentFunc) Run(_ context.Context, req AgentRequest) (Outcome, error) { return f(req) }

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, node string
		handlers   map[string]Handler
		wantClass  FailureClass
		wantReason string
	}{
		{
			name:       "unknown type",
			node:       `x [type="deploy.magic"]`,
			wantClass:  ClassStructural,
			wantReason: `unknown node type "deploy.magic": use one of codergen, conditional, exit, parallel, parallel.fan_in, start, tool, verify, verify.artifacts, wait.human, or register a handler for it`,
		},
		{
			name: "handler panic",
			node: `x [type="boom"]`,
			handlers: map[string]Handler{"boom": HandlerFunc(func(context.Context, *Stage) (Outcome, error) {
				var m map[string]int
				m["x"]++
				return Outcome{}, nil
			})},
			wantClass:  ClassDeterministic,
			wantReason: "the handler of node x panicked: assignment to entry in nil map (stack in panic.txt)",
		},
		{
			name: "handler error",
			node: `x [type="err"]`,
			handlers: map[string]Handler{"err": HandlerFunc(func(context.Context, *Stage) (Outcome, error) {
				return Outcome{}, errors.New("cannot reach the preview service: connection refused")
			})},
			wantClass:  ClassTransientInfra,
			wantReason: "node x: cannot reach the preview service: connection refused",
		},
		{
			name:       "verify.artifacts without a checker",
			node:       `x [type="verify.artifacts"]`,
			wantClass:  ClassStructural,
			wantReason: "node x: verify.artifacts needs an artifact checker, and this host provides none; run the pipeline with kilroy-bot run or serve",
		},
		{
			name:       "manager loop without a child pipeline",
			node:       `x [shape=house]`,
			wantClass:  ClassStructural,
			wantReason: "node x: stack.child_dotfile is not set",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.cfg.Handlers = tc.handlers
			got, res := runOne(t, h, tc.node)
			if got.Status != StatusFail || got.FailureClass != tc.wantClass || got.FailureReason != tc.wantReason {
				t.Errorf("outcome = %s %s %q\nwant fail %s %q", got.Status, got.FailureClass, got.FailureReason, tc.wantClass, tc.wantReason)
			}
			if res.Status != StatusSuccess {
				t.Errorf("run = %s, want success through the outcome=fail edge", res.Status)
			}
			if tc.name == "handler panic" {
				p := h.stageFile("x", "panic.txt")
				if !strings.Contains(p, "assignment to entry in nil map") || !strings.Contains(p, "goroutine") {
					t.Errorf("panic.txt lacks the panic or its stack:\n%s", p)
				}
			}
		})
	}
}

func TestHumanGateWithoutInterviewer(t *testing.T) {
	got, _ := runOne(t, newHarness(t), `g [shape=hexagon]`)
	if got.FailureClass != ClassStructural || got.FailureReason != "human gate g needs an interviewer and none is configured" {
		t.Errorf("outcome = %s %q", got.FailureClass, got.FailureReason)
	}
}

func TestCheckpointFailureFailsRun(t *testing.T) {
	h := newHarness(t)
	h.host.failCheckpoint = "a"
	res := h.run(mustLoad(t, chain("", `a [shape=parallelogram, tool_command="true"]`, `b [shape=parallelogram, tool_command="true"]`)))
	want := "checkpoint after node a failed: git commit: disk full"
	if res.Status != StatusFail || res.FailureReason != want || res.FailedNode != "a" {
		t.Errorf("run = %s %q at %q, want fail %q", res.Status, res.FailureReason, res.FailedNode, want)
	}
	if diff := cmp.Diff(res.Completed, []string{"start", "a"}); diff != "" {
		t.Errorf("completed (-got +want):\n%s", diff)
	}
}

func TestCancelStopsRun(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	h.cfg.Handlers = map[string]Handler{"cancel": HandlerFunc(func(context.Context, *Stage) (Outcome, error) {
		cancel()
		return Outcome{Status: StatusSuccess}, nil
	})}
	res, err := Run(ctx, mustLoad(t, chain("", `c [type=cancel]`, `b [shape=parallelogram, tool_command="true"]`), "cancel"), h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusFail || res.FailureClass != ClassCanceled || !strings.Contains(res.FailureReason, "run canceled during node c") {
		t.Errorf("run = %s %s %q, want canceled", res.Status, res.FailureClass, res.FailureReason)
	}
	if diff := cmp.Diff(res.Completed, []string{"start", "c"}); diff != "" {
		t.Errorf("completed (-got +want):\n%s", diff)
	}
}

func TestRunConfigErrors(t *testing.T) {
	p := mustLoad(t, chain(""))
	for _, cfg := range []RunConfig{{RunDir: t.TempDir()}, {Host: &execHost{}}} {
		if _, err := Run(context.Background(), p, cfg); err == nil {
			t.Errorf("Run(%+v) succeeded, want a configuration error", cfg)
		}
	}
}
