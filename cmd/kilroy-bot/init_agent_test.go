package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/runner/agent/agenttest"
)

// The agent on-ramp: `init --template agent-fix` in an empty repository
// writes the pipeline and a commented agents file; with only the agents
// file's base_url pointed at the fake model server (and the key variable it
// names set in the shell), validate is clean and the first `run` passes.
// The backend is the bot's own api loop, which runs in the bot's process.
func TestInitAgentFixRunsGreen(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not on PATH: the agent-fix template's commands need the go command")
	}
	repo := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	gitT(t, repo, "init", "--quiet", "--initial-branch", "main")

	code, stdout, stderr := runCmd("init", "--repo", repo, "--template", "agent-fix")
	if code != 0 {
		t.Fatalf("init: exit %d\n%s%s", code, stdout, stderr)
	}
	agents := filepath.Join(repo, ".kilroy", "agents.yml")
	write := func(path, content string) agenttest.Turn {
		return agenttest.Tool("write_file", map[string]any{"path": path, "content": content})
	}
	srv := agenttest.New(t,
		write("go.mod", "module example.com/hello\n\ngo 1.22\n"),
		write("hello.go", "package hello\n\n// Hello greets.\nfunc Hello() string { return \"hello\" }\n"),
		write("hello_test.go", "package hello\n\nimport \"testing\"\n\nfunc TestHello(t *testing.T) {\n\tif Hello() != \"hello\" {\n\t\tt.Fatal(Hello())\n\t}\n}\n"),
		agenttest.Tool("shell", map[string]any{"command": "go test ./..."}),
		agenttest.Text("Wrote the module and its test; they pass. OUTCOME:SUCCESS"))

	// The one edit the file asks for: where the API is.
	const defaultURL = "base_url: https://api.anthropic.com\n"
	sample := readFile(t, agents)
	if strings.Count(sample, defaultURL) != 1 {
		t.Fatalf("the agents file has no single %q line to point at a server:\n%s", strings.TrimSpace(defaultURL), sample)
	}
	writeTree(t, agents, strings.Replace(sample, defaultURL, "base_url: "+srv.URL+"\n", 1))
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-api03-ONRAMPTESTKEY0123456789abcdef")

	if code, stdout, stderr := runV("--repo", repo); code != 0 || !strings.HasSuffix(stdout, "0 errors, 0 warnings in 1 file\n") {
		t.Fatalf("validate: exit %d, want a clean pipeline\n%s%s", code, stdout, stderr)
	}
	gitT(t, repo, "add", ".kilroy")
	gitT(t, repo, "commit", "--quiet", "-m", "Add kilroy pipeline")
	code, stdout, stderr = runCmd("run", "--repo", repo, "--agents", agents, "--graph", "fix",
		"--data-dir", t.TempDir(), "--format", "text")
	if code != 0 {
		t.Fatalf("run: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if srv.Calls() != 5 {
		t.Errorf("the model server saw %d calls, want the 5 of its script", srv.Calls())
	}
	if strings.Contains(stdout+stderr, "sk-ant-api03-ONRAMPTESTKEY") {
		t.Errorf("the key shows in the run's output")
	}
}

// Without --agents a box node fails saying what to pass; with an agents
// file that has no backend, it says which file to add one to.
func TestRunWithoutAgentsSaysWhatToPass(t *testing.T) {
	repo := newRepo(t, map[string]string{".kilroy/ci.dot": dotFor(`
  fix [shape=box, prompt="Fix it"]
  start -> fix -> exit`)})
	empty := filepath.Join(t.TempDir(), "agents.yml")
	writeTree(t, empty, "agents:\n  backends: {}\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "none is configured: pass --agents FILE to kilroy-bot run"},
		{[]string{"--agents", empty}, "no agent backend is configured: add one under agents.backends (in " + empty + ", the file --agents names)"},
	} {
		args := append([]string{"run", "--repo", repo, "--data-dir", t.TempDir(), "--no-sandbox", "--format", "markdown"}, tc.args...)
		code, stdout, stderr := runCmd(args...)
		if code != 1 || !strings.Contains(stdout, tc.want) {
			t.Errorf("run %v: exit %d, want 1 and the report saying %q\nstdout:\n%s\nstderr:\n%s", tc.args, code, tc.want, stdout, stderr)
		}
	}
}
