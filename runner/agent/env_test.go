package agent

import (
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// The API loop's shell tool sees exactly what a tool node of the same
// stage sees (same toolchain, policy and stage variables); a CLI agent sees
// the same apart from its isolated HOME and its own provider key; none of
// them sees a bot secret, and the shell tool sees no provider key at all
// (seeds 000 and 002; DESIGN §2 Trust).
func TestEnvironmentParity(t *testing.T) {
	deps := fakeCLI(t, "claude", `env > .fake-env.txt; echo '{"type":"result","result":"OUTCOME:SUCCESS"}'`)
	ws := testWorktree(t)
	deps.Policy = map[string]string{"CARGO_TARGET_DIR": filepath.Join(ws, ".cargo-target"), "npm_config_cache": "/cache/npm"}
	a := newTestAgent(t, Config{Backends: map[string]Backend{"claude": {Kind: KindCLI, CLI: CLIClaude}}}, deps)
	req := testRequest(t, ws, "implement")

	// A tool node, run by the engine's Host.
	res, err := sandboxHost{deps}.Exec(t.Context(), attractor.ExecRequest{
		Argv: []string{"bash", "-c", "env"}, Dir: ws, StageEnv: req.StageEnv,
		StdoutPath: filepath.Join(req.StageDir, "tool.stdout.log"), StderrPath: filepath.Join(req.StageDir, "tool.stderr.log"),
	})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("tool node: %+v, %v", res, err)
	}
	tool := shellEnv(readFileT(t, filepath.Join(req.StageDir, "tool.stdout.log")))

	// The API loop's shell tool.
	wsp, err := openWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer wsp.Close()
	r := call(t, a.apiTools(req, wsp, a.jail(req)), "shell", map[string]any{"command": "env"})
	if r.IsError || !strings.HasPrefix(r.Content, "exit code 0") {
		t.Fatalf("shell tool: %+v", r)
	}
	_, out, _ := strings.Cut(r.Content, "\n")
	shell := shellEnv(out)

	// A CLI agent.
	if o, err := a.Run(t.Context(), req); err != nil || o.Status != attractor.StatusSuccess {
		t.Fatalf("CLI agent: %+v, %v", o, err)
	}
	cli := shellEnv(readFileT(t, filepath.Join(ws, ".fake-env.txt")))

	if diff := cmp.Diff(shell, tool); diff != "" {
		t.Errorf("shell tool and tool node environments differ (-shell +tool):\n%s", diff)
	}
	for _, k := range []string{"PATH", "CARGO_HOME", "RUSTUP_HOME", "GOPATH", "GOMODCACHE", "GOCACHE", "CARGO_TARGET_DIR", "npm_config_cache", "KILROY_STAGE_STATUS_PATH"} {
		if tool[k] == "" || cli[k] != tool[k] {
			t.Errorf("%s: tool node %q, CLI agent %q; want the same, set", k, tool[k], cli[k])
		}
	}
	if cli["HOME"] != filepath.Join(req.StageDir, "home") || tool["HOME"] != deps.HostEnv["HOME"] {
		t.Errorf("HOME: CLI %q, tool %q", cli["HOME"], tool["HOME"])
	}
	rest := maps.Clone(cli)
	delete(rest, "HOME")
	delete(rest, "ANTHROPIC_API_KEY")
	for k := range cliFlavourEnv(Backend{CLI: CLIClaude}, 0, true) { // tested in TestCLIFlavourSettings
		delete(rest, k)
	}
	toolRest := maps.Clone(tool)
	delete(toolRest, "HOME")
	if diff := cmp.Diff(rest, toolRest); diff != "" {
		t.Errorf("CLI agent and tool node differ beyond HOME, the key and its switches (-cli +tool):\n%s", diff)
	}
	if cli["ANTHROPIC_API_KEY"] != testAnthropicKey {
		t.Errorf("the CLI agent did not get its provider key")
	}
	for who, env := range map[string]map[string]string{"tool node": tool, "shell tool": shell, "CLI agent": cli} {
		for k, v := range env {
			leak := k == "CLAUDECODE" || k == "GITHUB_TOKEN" || k == "KILROY_WEBHOOK_SECRET" || k == "OPENAI_API_KEY" ||
				strings.Contains(v, testWebhook) || strings.Contains(v, testGitHubToken) || strings.Contains(v, testOpenAIKey) ||
				(who != "CLI agent" && strings.Contains(v, testAnthropicKey))
			if leak {
				t.Errorf("%s sees %s=%s", who, k, v)
			}
		}
	}
}

// shellEnv parses `env` output, without the variables bash sets itself.
func shellEnv(s string) map[string]string {
	m := parseEnv(s)
	for _, k := range []string{"PWD", "OLDPWD", "SHLVL", "_"} {
		delete(m, k)
	}
	return m
}
