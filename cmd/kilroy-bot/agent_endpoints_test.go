package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// agentsYAML is an agents file of one backend (a YAML flow mapping) and
// the sandbox section sandbox ("" for none).
func agentsYAML(backend, sandbox string) string {
	s := "agents:\n  default: local\n  backends:\n    local: " + backend + "\n"
	if sandbox != "" {
		s += "sandbox:\n" + sandbox
	}
	return s
}

const localCLI = `{kind: cli, cli: command, no_key: true, command: [my-agent, "{prompt_file}"]`

// validate --agents warns, naming the setting that fixes it, for each
// agent CLI endpoint the run's network does not reach: loopback (host),
// a private address (network_allow), any with network none; not for an
// api backend (the bot's own process calls it) nor where the settings
// open the way.
func TestValidateAgentEndpoints(t *testing.T) {
	for _, tt := range []struct {
		name, backend, sandbox string
		want                   []string // in the output; none: clean
	}{
		{"loopback", localCLI + `, base_url: "http://127.0.0.1:11434"}`, "",
			[]string{"agents.yml:4:", "warning", "agents.backends.local.base_url http://127.0.0.1:11434", "loopback",
				"fix: set sandbox.network: host in", "[agent_endpoint_unreachable]"}},
		{"localhost in env", localCLI + `, env: {OPENAI_BASE_URL: "http://localhost:8000/v1"}}`, "",
			[]string{"agents.backends.local.env.OPENAI_BASE_URL http://localhost:8000/v1", "sandbox.network: host"}},
		{"private", localCLI + `, base_url: "http://10.1.2.3:8080/v1"}`, "",
			[]string{"10.1.2.3 is in 10.0.0.0/8, which network public blocks", "network_allow: [10.1.2.3/32]"}},
		{"private allowed", localCLI + `, base_url: "http://10.1.2.3:8080/v1"}`, "  network_allow: [10.1.2.0/24]\n", nil},
		{"loopback with network host", localCLI + `, base_url: "http://127.0.0.1:11434"}`, "  network: host\n", nil},
		{"network none", localCLI + `, base_url: "https://models.example.com/v1"}`, "  network: none\n",
			[]string{"sandbox.network none gives nodes no network", "set sandbox.network: public"}},
		{"public", localCLI + `, base_url: "https://models.example.com/v1"}`, "", nil},
		{"api backend on loopback", `{kind: api, api: openai, no_key: true, model: m, base_url: "http://127.0.0.1:11434/v1"}`, "", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "agents.yml")
			writeFile(t, path, agentsYAML(tt.backend, tt.sandbox), 0o644)
			code, stdout, stderr := runCmd("validate", "--agents", path, "--repo", t.TempDir())
			if code != 0 {
				t.Fatalf("exit %d, want 0 (warnings only)\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("the output lacks %q:\n%s", w, stdout)
				}
			}
			if tt.want == nil && strings.Contains(stdout, "agent_endpoint_unreachable") {
				t.Errorf("a warning where the endpoint is reached:\n%s", stdout)
			}
		})
	}
	path := filepath.Join(t.TempDir(), "agents.yml")
	writeFile(t, path, agentsYAML(localCLI+"}", "  network: sideways\n"), 0o644)
	if code, stdout, _ := runCmd("validate", "--agents", path, "--repo", t.TempDir()); code != 1 || !strings.Contains(stdout, "sideways") {
		t.Errorf("a bad sandbox.network: exit %d, output:\n%s\nwant exit 1 naming the value", code, stdout)
	}
}

// kilroy-bot run takes sandbox.network from the --agents file: with the
// default (public) a node does not reach a server on this machine's
// loopback, and run warns that the agent CLI backend on loopback is out
// of reach; with network host written there, the node reaches it and
// nothing is said.
func TestRunAgentsFileNetwork(t *testing.T) {
	needSandbox(t)
	if _, err := exec.LookPath("pasta"); err != nil {
		t.Skip("no pasta (passt) here: network public falls back to host")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var conns atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	repo := newRepo(t, map[string]string{".kilroy/ci.dot": dotFor(fmt.Sprintf(`
  reach [shape=parallelogram, tool_command="exec 3<>/dev/tcp/127.0.0.1/%d"]
  start -> reach -> exit`, port))})
	for _, tt := range []struct {
		sandbox  string
		wantCode int
		warned   bool
	}{{"", 1, true}, {"  network: host\n", 0, false}} {
		conns.Store(0)
		dir := t.TempDir()
		agents := filepath.Join(dir, "agents.yml")
		writeFile(t, agents, agentsYAML(localCLI+fmt.Sprintf(`, base_url: "http://127.0.0.1:%d"}`, port), tt.sandbox), 0o644)
		code, stdout, stderr := runCmd("run", "--repo", repo, "--run-dir", filepath.Join(dir, "run"),
			"--data-dir", filepath.Join(dir, "data"), "--agents", agents)
		reached := conns.Load() > 0
		if code != tt.wantCode || reached != (tt.wantCode == 0) {
			t.Errorf("sandbox %q: exit %d, listener reached %v; want exit %d\nstdout:\n%s\nstderr:\n%s",
				tt.sandbox, code, reached, tt.wantCode, stdout, stderr)
		}
		warned := strings.Contains(stderr, "warning: agents.backends.local.base_url") &&
			strings.Contains(stderr, "set sandbox.network: host in "+agents)
		if warned != tt.warned {
			t.Errorf("sandbox %q: warned of the loopback endpoint: %v, want %v\nstderr:\n%s", tt.sandbox, warned, tt.warned, stderr)
		}
	}
}

// serve logs the same warning at start, naming its policy file.
func TestServeWarnsOfAgentEndpoints(t *testing.T) {
	needSandbox(t)
	if _, err := exec.LookPath("pasta"); err != nil {
		t.Skip("no pasta (passt) here: serve would not start with network public")
	}
	policyFile := filepath.Join(t.TempDir(), "policy.yml")
	src := agentsYAML(localCLI+`, base_url: "http://192.168.7.7:8080/v1"}`, "")
	var p serverPolicy
	if err := decodePolicy(policyFile, []byte(src), &p); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	ctx := withLogger(context.Background(), slog.New(slog.NewTextHandler(&log, nil)))
	c := serveConfig{DataDir: t.TempDir(), ConfigFile: policyFile, Policy: p}
	s, err := newSandbox(ctx, c, map[string]string{"PATH": os.Getenv("PATH")})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	for _, want := range []string{"level=WARN", "agents.backends.local.base_url http://192.168.7.7:8080/v1",
		"192.168.0.0/16", "network_allow: [192.168.7.7/32]", policyFile} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("serve's log lacks %q:\n%s", want, log.String())
		}
	}
}
