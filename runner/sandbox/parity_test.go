package sandbox

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// probe prints what a node sees: Go's resolved locations when go is on the
// PATH, then the environment.
const probe = `echo '--- go'
if command -v go >/dev/null; then go env GOPATH GOMODCACHE GOCACHE; fi
echo '--- env'
env`

type seen struct {
	goEnv string
	env   map[string]string
}

func runProbe(t *testing.T, c Cmd) seen {
	t.Helper()
	out := NewTail(1 << 20)
	c.Stdout, c.Stderr = out, out
	res, err := Run(t.Context(), c)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Run(%q) = %+v, %v; output:\n%s", c.Argv, res, err, out.Bytes())
	}
	goPart, envPart, ok := strings.Cut(strings.TrimPrefix(string(out.Bytes()), "--- go\n"), "--- env\n")
	if !ok {
		t.Fatalf("probe output:\n%s", out.Bytes())
	}
	s := seen{goEnv: goPart, env: make(map[string]string)}
	for line := range strings.Lines(envPart) {
		if k, v, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "="); ok {
			s.env[k] = v
		}
	}
	for _, k := range []string{"PWD", "OLDPWD", "SHLVL", "_"} {
		delete(s.env, k) // set by the shells, not by NodeEnv
	}
	return s
}

// A tool node and an agent CLI with its own HOME, both built by NodeEnv,
// see the same toolchain and none of the bot's secrets (seed 000).
func TestToolAndAgentSeeTheSameToolchain(t *testing.T) {
	realHome, agentHome, worktree, bin := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	writeScript(t, bin, "fake-agent", "exec bash -c \"$1\"\n")
	for _, home := range []string{realHome, agentHome} {
		goTelemetryOff(t, home)
	}
	host := map[string]string{
		"PATH": HostEnv()["PATH"] + ":" + bin, "HOME": realHome, "USER": "kilroy", "LANG": "C.UTF-8",
		"KILROY_WEBHOOK_SECRET": "s3cret", "GITHUB_TOKEN": "ghs_xxx", "CLAUDECODE": "1",
		"ANTHROPIC_API_KEY": "sk-bot",
	}
	secrets := []string{"s3cret", "ghs_xxx", "sk-bot"}
	stage := map[string]string{"KILROY_NODE_ID": "n1", "KILROY_STAGE_STATUS_PATH": filepath.Join(worktree, "status.json")}

	tool := runProbe(t, Cmd{
		Argv: []string{"bash", "-c", probe}, Dir: worktree,
		Env: NodeEnv(EnvSpec{Host: host, Stage: stage, SecretValues: secrets}),
	})
	agent := runProbe(t, Cmd{
		Argv: []string{"fake-agent", probe}, Dir: worktree,
		Env: NodeEnv(EnvSpec{
			Host: host, Stage: stage, SecretValues: secrets, HomeOverride: agentHome,
			Extra: map[string]string{"ANTHROPIC_API_KEY": "sk-agent"},
		}),
	})

	if tool.env["HOME"] != realHome || agent.env["HOME"] != agentHome {
		t.Errorf("HOME: tool %q, agent %q; want %q, %q", tool.env["HOME"], agent.env["HOME"], realHome, agentHome)
	}
	if _, ok := tool.env["ANTHROPIC_API_KEY"]; ok || agent.env["ANTHROPIC_API_KEY"] != "sk-agent" {
		t.Errorf("ANTHROPIC_API_KEY: tool %q, agent %q; want unset, the agent's own", tool.env["ANTHROPIC_API_KEY"], agent.env["ANTHROPIC_API_KEY"])
	}
	for _, s := range []seen{tool, agent} {
		for k, v := range s.env {
			for _, secret := range secrets {
				if strings.Contains(v, secret) || k == "CLAUDECODE" {
					t.Errorf("a node sees %s=%s", k, v)
				}
			}
		}
	}
	// Apart from HOME and the agent's key, they see the same environment.
	toolRest, agentRest := maps.Clone(tool.env), maps.Clone(agent.env)
	for _, k := range []string{"HOME", "ANTHROPIC_API_KEY"} {
		delete(toolRest, k)
		delete(agentRest, k)
	}
	if diff := cmp.Diff(toolRest, agentRest); diff != "" {
		t.Errorf("tool and agent environments differ (-tool +agent):\n%s", diff)
	}
	wantPins := map[string]string{
		"CARGO_HOME":  filepath.Join(realHome, ".cargo"),
		"RUSTUP_HOME": filepath.Join(realHome, ".rustup"),
		"GOPATH":      filepath.Join(realHome, "go"),
		"GOMODCACHE":  filepath.Join(realHome, "go", "pkg", "mod"),
	}
	for k, want := range wantPins {
		if got := agent.env[k]; got != want {
			t.Errorf("agent %s = %q, want %q under the real HOME", k, got, want)
		}
	}

	if _, err := LookPath(testEnv(), "go"); err != nil {
		return // no Go toolchain to ask; the variables above were compared
	}
	t.Logf("go env in both nodes:\n%s", agent.goEnv)
	if tool.goEnv != agent.goEnv {
		t.Errorf("go env differs:\ntool:\n%s\nagent:\n%s", tool.goEnv, agent.goEnv)
	}
	if want := wantPins["GOPATH"] + "\n" + wantPins["GOMODCACHE"] + "\n"; !strings.HasPrefix(agent.goEnv, want) {
		t.Errorf("agent's go env = %q, want it to start with %q", agent.goEnv, want)
	}
}

// goTelemetryOff turns Go's telemetry off for a test HOME. Otherwise `go env`
// starts a detached telemetry process (its own session, out of reach of the
// group kill) that may still write under HOME while the test removes it.
func goTelemetryOff(t *testing.T, home string) {
	t.Helper()
	dir := filepath.Join(home, ".config", "go", "telemetry")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mode"), []byte("off"), 0o644); err != nil {
		t.Fatal(err)
	}
}
