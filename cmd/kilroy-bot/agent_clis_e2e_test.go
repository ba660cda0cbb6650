package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/internal/testnet"
	"github.com/kilroy-bot/kilroy-bot/runner/agent/agenttest"
	"github.com/kilroy-bot/kilroy-bot/secrets"
)

// The real agent CLIs (installed by scripts/install-agent-clis.sh) run
// through `kilroy-bot run` inside the node sandbox, against the fake model
// server, with the bot running as whatever user the test runs as (root in
// a container, where the jail runs the CLI as its own ordinary user). The
// server of jailed CLIs listens in a network namespace the test makes for
// itself, standing for the internet, which the run's nodes reach through
// pasta (sandbox.network public, the default; see modelServer); the
// unjailed CLIs reach it on 127.0.0.1.

// agentCLIDir is where scripts/install-agent-clis.sh puts the CLIs:
// $KILROY_AGENT_CLIS, else kilroy-bot/agent-clis in the user cache
// directory. The test skips, saying so, when they are not there.
func agentCLIDir(t *testing.T, program string) string {
	t.Helper()
	dir := os.Getenv("KILROY_AGENT_CLIS")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			t.Skipf("agent CLIs: no cache directory: %v", err)
		}
		dir = filepath.Join(cache, "kilroy-bot", "agent-clis")
	}
	bin := filepath.Join(dir, "node_modules", ".bin", program)
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("agent CLI %s is not installed in %s: run scripts/install-agent-clis.sh (.ci/run does)", program, dir)
	}
	return bin
}

// cliCase is one run of a real CLI: the model's script, what the node
// looks like, and what the run must end with.
type cliCase struct {
	name  string
	turns []agenttest.Turn
	// extraArgs are appended to the CLI's command (a turn limit).
	extraArgs []string
	nodeAttrs string // more attributes of the agent node
	noRetry   bool   // max_retries=0 instead of 1
	maxTurns  int    // agents.limits.max_turns (the api backend's limit)
	// wantClasses are the failure classes of the fix node's attempts in
	// order ("" for success); wantRun is the run's ("" when it passes).
	wantClasses []string
	wantRun     string
	wantReason  string // in the run's failure reason
	wantCommit  bool   // hello.txt reaches the run branch
	wantKept    string // in the fix node's response.md
	// wantCalls, when set, is how many requests taking a turn the server
	// must see in the whole run.
	wantCalls int
	// wantUsage: the fix node's status.json holds exactly the tokens the
	// server served, and the cost the CLI reported or the prices give.
	wantUsage bool
	// config, when set, is the repository's .kilroy/config.yml.
	config string
	// wantFile is on the run branch though the run fails (work kept).
	wantFile string
	// callsIn, when set, bounds the requests taking a turn: [min, max].
	callsIn [2]int
	// wantHello, when set, is hello.txt on the run branch.
	wantHello string
	// wantNoCalls: the server must see no request at all.
	wantNoCalls bool
	// reasonHas are more strings the run's failure reason must hold.
	reasonHas []string
}

// progressAttempts reads the failure class of every attempt of node from
// the run's progress.ndjson, and the run's failure class and reason.
func progressAttempts(t *testing.T, runDir, node string) (classes []string, runClass, reason string) {
	t.Helper()
	f, err := os.Open(filepath.Join(runDir, "progress.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev struct {
			Type, Node, Status, Reason string
			FailureClass               string `json:"failure_class"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("progress.ndjson: %v", err)
		}
		switch {
		case ev.Type == "run_finished":
			runClass, reason = ev.FailureClass, ev.Reason
		case ev.Node == node && (ev.Type == "attempt_finished" || ev.Type == "node_finished"):
			classes = append(classes, ev.FailureClass)
		}
	}
	return classes, runClass, reason
}

// stageFiles returns every file under the run's nodes/ directory with its
// content.
func stageFiles(t *testing.T, runDir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	root := filepath.Join(runDir, "nodes")
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil {
			rel, _ := filepath.Rel(root, p)
			out[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func writeAgents(t *testing.T, path, backend string, b map[string]any, maxTurns int) {
	t.Helper()
	writeAgentsNetwork(t, path, backend, b, maxTurns, "")
}

// writeAgentsNetwork is writeAgents with the file's sandbox.network set
// to network, unless "".
func writeAgentsNetwork(t *testing.T, path, backend string, b map[string]any, maxTurns int, network string) {
	t.Helper()
	writeAgentsRuntime(t, path, backend, b, maxTurns, network, "")
}

// writeAgentsRuntime is writeAgentsNetwork with agents.runtime set to
// runtime, unless "".
func writeAgentsRuntime(t *testing.T, path, backend string, b map[string]any, maxTurns int, network, runtime string) {
	t.Helper()
	limits := map[string]any{"provider_retries": 1, "retry_backoff": "10ms"}
	if maxTurns > 0 {
		limits["max_turns"] = maxTurns
	}
	agents := map[string]any{"default": backend, "backends": map[string]any{backend: b}, "limits": limits}
	if runtime != "" {
		agents["runtime"] = runtime
	}
	cfg := map[string]any{"agents": agents}
	if network != "" {
		cfg["sandbox"] = map[string]any{"network": network}
	}
	data, err := json.Marshal(cfg) // JSON is YAML
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, string(data)+"\n", 0o644)
}

// shellTool is a CLI's tool for running a shell command: its name and
// the argument holding the command.
type shellTool struct{ name, arg string }

func (s shellTool) call(cmd string) agenttest.Call {
	args := map[string]any{s.arg: cmd}
	if s.name == "Bash" {
		args["description"] = "run it"
	}
	return agenttest.Call{Name: s.name, Args: args}
}

func (s shellTool) turn(cmd string) agenttest.Turn {
	return agenttest.Turn{Calls: []agenttest.Call{s.call(cmd)}}
}

// cliUnderTest is how one real CLI is configured against the fake server.
type cliUnderTest struct {
	cli     string // agents.backends.*.cli
	program string // under node_modules/.bin
	bin     string // its path, once found
	keyEnv  string
	key     string
	command []string // the built-in template, program first
	baseURL func(srvURL string) string
	env     map[string]string // backend env: the CLI's own retries kept short
	shell   shellTool
	model   string // the backend's model, when the CLI needs one named
	sandbox bool   // false: --no-sandbox, the CLI runs as the bot's user
	// network is the run's sandbox.network ("": the default, public).
	network string
	// api, when set, makes the backend the bot's own api loop over this
	// protocol instead of a CLI.
	api string
	// runtime, when set, is the agents file's agents.runtime.
	runtime string
	// adjust fits a case of the matrix to what the CLI does, or returns
	// why the case does not apply to it.
	adjust func(tc *cliCase) (skip string)
}

var claudeCLI = cliUnderTest{
	cli: "claude", program: "claude", keyEnv: "ANTHROPIC_API_KEY", key: "sk-ant-api03-E2ETESTKEY0123456789abcdefXYZ",
	command: []string{"claude", "-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"},
	baseURL: func(u string) string { return u },
	shell:   shellTool{"Bash", "command"},
	adjust: func(tc *cliCase) string {
		if tc.name == "turn limit" {
			tc.maxTurns = 1 // --max-turns, which the bot passes
		}
		return ""
	},
}

// Codex with a model it has no metadata for uses plain function tools
// (exec_command); with its default model it would use its JavaScript
// "code mode" tool, which the fake server does not script.
var codexCLI = cliUnderTest{
	cli: "codex", program: "codex", keyEnv: "OPENAI_API_KEY", key: "sk-proj-E2ETESTKEY0123456789abcdefXYZ",
	command: []string{"codex", "exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "{config_args}", "{model_args}", "-"},
	baseURL: func(u string) string { return u + "/v1" },
	model:   "fake-model",
	shell:   shellTool{"exec_command", "cmd"},
	adjust: func(tc *cliCase) string {
		switch tc.name {
		case "turn limit":
			// Codex has no turn limit of its own; the bot stops it from
			// its event stream once its tool call would start turn 2.
			tc.maxTurns = 1
		case "HTTP 500 always": // Codex names no status for a 5xx or a 400
			tc.wantReason = "high demand"
		case "HTTP 400":
			tc.wantReason = "invalid_request_error"
		}
		return ""
	},
}

var geminiCLI = cliUnderTest{
	cli: "gemini", program: "gemini", keyEnv: "GEMINI_API_KEY", key: "AIzaSyE2ETESTKEY0123456789abcdefXYZ",
	command: []string{"gemini", "--output-format", "json", "--yolo"},
	baseURL: func(u string) string { return u },
	shell:   shellTool{"run_shell_command", "command"},
	adjust: func(tc *cliCase) string {
		switch tc.name {
		case "stream cut once":
			// Gemini CLI does not retry a stream cut mid-answer: the
			// attempt fails and the node's retry succeeds.
			tc.wantClasses = []string{"transient_infra", ""}
		case "turn limit":
			tc.maxTurns = 1 // its maxSessionTurns, in the settings the bot writes
		case "timeout":
			// It takes seconds to start (more on a busy machine) before
			// its first model call.
			tc.nodeAttrs = `, timeout="20s"`
		}
		return ""
	},
}

// runCLICase runs tc through `kilroy-bot run` with c and checks the fix
// node's attempts, the run branch, and that no stage file keeps the key.
// srv is the test's fake model server, given the case's script here.
func runCLICase(t *testing.T, srv *agenttest.Server, c cliUnderTest, tc cliCase) {
	t.Helper()
	t.Setenv(c.keyEnv, c.key)
	srv.Reset(tc.turns...)
	dir := t.TempDir()
	agents := filepath.Join(dir, "agents.yml")
	backend := map[string]any{"kind": "cli", "cli": c.cli, "base_url": c.baseURL(srv.URL),
		"command": append(append([]string{c.bin}, c.command[1:]...), tc.extraArgs...)}
	if len(c.env) > 0 {
		backend["env"] = c.env
	}
	if c.model != "" {
		backend["model"] = c.model
	}
	if c.api != "" {
		backend = map[string]any{"kind": "api", "api": c.api, "base_url": c.baseURL(srv.URL), "model": "fake-model"}
	}
	backend["prices"] = map[string]any{"**": testPrice}
	writeAgentsRuntime(t, agents, or(c.cli, c.api), backend, tc.maxTurns, c.network, c.runtime)
	retries := "1"
	if tc.noRetry {
		retries = "0"
	}
	files := map[string]string{".kilroy/ci.dot": dotFor(`
  fix [shape=box, prompt="Create hello.txt containing hi", max_retries=` + retries + tc.nodeAttrs + `]
  check [shape=octagon, command="grep -q hi hello.txt"]
  start -> fix -> check -> exit`)}
	if tc.config != "" {
		files[".kilroy/config.yml"] = tc.config
	}
	repo := newRepo(t, files)
	runDir := filepath.Join(dir, "run")
	args := []string{"run", "--repo", repo, "--run-dir", runDir, "--data-dir", filepath.Join(dir, "data"), "--agents", agents}
	if !c.sandbox {
		args = append(args, "--no-sandbox")
	}
	code, stdout, stderr := runCmd(args...)
	wantCode := 1
	if tc.wantCommit {
		wantCode = 0
	}
	if code != wantCode {
		t.Errorf("run: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, wantCode, stdout, stderr)
	}
	if c.sandbox && strings.Contains(stderr, "without a sandbox") {
		t.Fatalf("the run was not sandboxed:\n%s", stderr)
	}
	if _, err := exec.LookPath("pasta"); err == nil && c.sandbox && c.network == "" && strings.Contains(stderr, "share this machine's network") {
		t.Fatalf("the run's nodes fell back to the host's network:\n%s", stderr)
	}
	classes, runClass, reason := progressAttempts(t, runDir, "fix")
	if diff := cmp.Diff([]any{classes, runClass}, []any{tc.wantClasses, tc.wantRun}); diff != "" {
		t.Errorf("failure classes of fix's attempts (-got +want):\n%s\nreason: %s\nserver calls: %d", diff, reason, srv.Calls())
	}
	if tc.wantCalls > 0 && srv.Calls() != tc.wantCalls {
		t.Errorf("the server saw %d model calls, want %d", srv.Calls(), tc.wantCalls)
	}
	if tc.callsIn[1] > 0 && (srv.Calls() < tc.callsIn[0] || srv.Calls() > tc.callsIn[1]) {
		t.Errorf("the server saw %d model calls, want %d to %d", srv.Calls(), tc.callsIn[0], tc.callsIn[1])
	}
	if tc.wantNoCalls && len(srv.Requests()) != 0 {
		t.Errorf("the server saw %d requests, want none", len(srv.Requests()))
	}
	if tc.wantHello != "" {
		if got := gitT(t, repo, "show", runBranch(t, repo)+":hello.txt") + "\n"; got != tc.wantHello {
			t.Errorf("hello.txt on the run branch:\n%s\nwant:\n%s", got, tc.wantHello)
		}
	}
	if tc.wantFile != "" && !strings.Contains(runBranchFileList(t, repo), tc.wantFile) {
		t.Errorf("%s, the work so far, is not on the run branch", tc.wantFile)
	}
	if tc.wantRun == "budget_exhausted" && tc.config != "" && !strings.Contains(stdout, "budget-limited") {
		t.Errorf("the report does not say budget-limited:\n%s", stdout)
	}
	for _, w := range append([]string{tc.wantReason}, tc.reasonHas...) {
		if !strings.Contains(reason, w) {
			t.Errorf("the run's reason %q lacks %q", reason, w)
		}
	}
	stage := stageFiles(t, runDir)
	// KILROY_E2E_KEEP=DIR keeps each case's directory and the requests the
	// server saw, to see what a CLI did.
	if d := os.Getenv("KILROY_E2E_KEEP"); d != "" {
		keep := filepath.Join(d, strings.ReplaceAll(t.Name(), "/", "_"))
		_ = os.RemoveAll(keep)
		_ = exec.Command("cp", "-a", dir, keep).Run()
		for i, r := range srv.Requests() {
			b, _ := json.MarshalIndent(map[string]any{"path": r.Path, "header": r.Header, "body": r.Body, "turn": r.Turn}, "", " ")
			_ = os.WriteFile(filepath.Join(keep, fmt.Sprintf("req%02d.json", i)), b, 0o644)
		}
	}
	if tc.wantKept != "" && !strings.Contains(stage[filepath.Join("fix", "response.md")], tc.wantKept) {
		t.Errorf("fix/response.md = %q, want it to keep %q", stage[filepath.Join("fix", "response.md")], tc.wantKept)
	}
	if strings.Contains(reason, c.key) || strings.Contains(stdout, c.key) || strings.Contains(stderr, c.key) {
		t.Errorf("the key shows in the reason or the output")
	}
	if tc.wantUsage {
		checkCLIUsage(t, srv, c, tc, runDir)
	}
	if got := strings.Contains(runBranchFileList(t, repo), "hello.txt"); got != tc.wantCommit && tc.wantFile != "hello.txt" {
		t.Errorf("hello.txt on the run branch: %v, want %v", got, tc.wantCommit)
	}
	for name, body := range stage {
		for _, form := range secrets.Forms(c.key) {
			if i := strings.Index(body, form); i >= 0 {
				t.Errorf("stage file %s keeps a form of the provider key: %q", name, body[max(0, i-300):i])
			}
		}
	}
	for _, r := range srv.Requests() {
		if r.Turn >= 0 && !strings.Contains(r.Header.Get("X-Api-Key")+r.Header.Get("Authorization")+r.Header.Get("X-Goog-Api-Key"), c.key) {
			t.Errorf("request %s did not carry the key", r.Path)
			break
		}
	}
	t.Logf("%s: classes %q, run %q, %d model calls, reason: %.300s", tc.name, classes, runClass, srv.Calls(), reason)
}

// cliMatrix is the fault matrix of the issue for a CLI whose shell tool is
// shell: each case's model script and the node's fate.
func cliMatrix(shell shellTool) []cliCase {
	write := shell.turn("echo hi > hello.txt")
	done := agenttest.Text("Created hello.txt. OUTCOME:SUCCESS")
	fail := agenttest.Failing
	ti, st, de, be := "transient_infra", "structural", "deterministic", "budget_exhausted"
	return []cliCase{
		{name: "happy path", turns: usageTurns(shell), wantClasses: []string{""}, wantCommit: true, wantUsage: true},
		{name: "stream cut once", turns: []agenttest.Turn{fail(agenttest.CutStream), write, done}, wantClasses: []string{""}, wantCommit: true},
		// Cut at the stream's start: Claude Code sometimes takes a stream cut
		// mid-message for the whole message and ends its session as if done
		// (about one run in five here), which no engine can tell from a
		// finished session; "stream cut once" covers the mid-message cut.
		{name: "stream cut always", turns: []agenttest.Turn{fail(agenttest.CutAtStart)}, wantClasses: []string{ti, ti}, wantRun: ti},
		{name: "HTTP 500 always", turns: []agenttest.Turn{fail(agenttest.ServerError)}, wantClasses: []string{ti, ti}, wantRun: ti, wantReason: "500"},
		{name: "HTTP 401", turns: []agenttest.Turn{fail(agenttest.BadKey)}, wantClasses: []string{st}, wantRun: st},
		// One request: no CLI retries a 400 (Claude Code would, without one
		// experimental beta header after another, but the bot turns those
		// betas off), and the node is not retried.
		{name: "HTTP 400", turns: []agenttest.Turn{fail(agenttest.BadRequest)}, wantClasses: []string{de}, wantRun: de, wantReason: "400", wantCalls: 1},
		{name: "turn limit", turns: []agenttest.Turn{shell.turn("echo still working")}, wantClasses: []string{be}, wantRun: be, wantReason: "turn limit"},
		// The timeout must outlast the CLI's start and first model call:
		// 4 s did not on a machine at load 12 (Claude Code made no call).
		// The tool call blocks until killed; Claude Code 2.1 ends a
		// foreground `sleep 60` at once, and then loops to its turn limit.
		{name: "timeout", turns: []agenttest.Turn{{Text: "halfway there", Calls: []agenttest.Call{shell.call("tail -f /dev/null")}}},
			noRetry: true, nodeAttrs: `, timeout="12s"`, wantClasses: []string{ti}, wantRun: ti, wantReason: "timed out", wantKept: "halfway there"},
		// The model keeps asking for tools; limits.max_tokens stops the
		// agent within one model call of the budget.
		budgetCase(shell),
		// The attempt succeeds; its checkpoint is refused and the run stops.
		{name: "key written into a file", turns: []agenttest.Turn{write, shell.turn("echo \"$ANTHROPIC_API_KEY$OPENAI_API_KEY$CODEX_API_KEY$GEMINI_API_KEY\" > key.txt"), done},
			wantClasses: []string{""}, wantRun: de, wantReason: "key.txt:1"},
	}
}

// runMatrix runs the whole matrix (jailed) or the happy path and the
// leaking agent (unjailed, as the bot's own user) with c, on one server.
func runMatrix(t *testing.T, c cliUnderTest, jailed bool) {
	if c.api == "" {
		c.bin = agentCLIDir(t, c.program)
	}
	var srv *agenttest.Server
	if c.sandbox = jailed; jailed {
		needSandbox(t)
		srv, c.network = modelServer(t)
	} else {
		srv = agenttest.New(t, agenttest.Text("no case yet"))
	}
	for _, tc := range cliMatrix(c.shell) {
		if !jailed && tc.name != "happy path" && tc.name != "key written into a file" {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			if c.adjust != nil {
				if why := c.adjust(&tc); why != "" {
					t.Skip(why)
				}
			}
			runCLICase(t, srv, c, tc)
		})
	}
}

// modelServer is the fake model server of jailed CLIs, and the run's
// sandbox.network: a server in a network namespace the test makes,
// standing for the internet (internal/testnet: a public-looking address
// that network public, the default, reaches through pasta); where the test
// cannot make one (not root, no CAP_NET_ADMIN), a server on 127.0.0.1,
// which only network host reaches, and the test says so.
func modelServer(t *testing.T) (*agenttest.Server, string) {
	in, err := testnet.Make(t)
	if err != nil {
		t.Logf("the fake model server listens on 127.0.0.1, and the run has sandbox.network: host to reach it: %v", err)
		return agenttest.New(t, agenttest.Text("no case yet")), "host"
	}
	ln, err := in.Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	return agenttest.Serve(t, ln, agenttest.Text("no case yet")), ""
}

func TestRealClaudeCLI(t *testing.T) { runMatrix(t, claudeCLI, true) }
func TestRealCodexCLI(t *testing.T)  { runMatrix(t, codexCLI, true) }
func TestRealGeminiCLI(t *testing.T) { runMatrix(t, geminiCLI, true) }

// The CLIs run by the bot's own user, unjailed (--no-sandbox): as root
// Claude Code needs IS_SANDBOX=1 to accept --dangerously-skip-permissions.
func TestRealClaudeCLIUnjailed(t *testing.T) { runMatrix(t, claudeCLI, false) }
func TestRealCodexCLIUnjailed(t *testing.T)  { runMatrix(t, codexCLI, false) }
func TestRealGeminiCLIUnjailed(t *testing.T) { runMatrix(t, geminiCLI, false) }

func or(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

// The same matrix for the bot's own api backend (Anthropic Messages) in
// the sandbox. Its shell tool never sees the key, so the leaking model
// writes the key it somehow learnt with write_file.
func TestAPIBackendRun(t *testing.T) {
	c := claudeCLI
	c.api, c.shell = "anthropic", shellTool{"shell", "command"}
	c.adjust = func(tc *cliCase) string {
		switch tc.name {
		case "turn limit":
			tc.maxTurns, tc.wantReason = 1, "max_turns"
		case "key written into a file":
			tc.turns = []agenttest.Turn{tc.turns[0], agenttest.Tool("write_file", map[string]any{"path": "key.txt", "content": c.key + "\n"}), tc.turns[2]}
		}
		return ""
	}
	runMatrix(t, c, true)
}
