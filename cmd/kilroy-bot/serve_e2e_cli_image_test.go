package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/runner/agent/agenttest"
	"github.com/kilroy-bot/kilroy-bot/runner/image/imagetest"
)

// A served pull request whose repository names an image without node or
// any agent CLI runs a real CLI agent in it from the server's
// agents.runtime: the backend names the CLI by its bare name, which
// neither the image nor serve's PATH has. The CLI's shell tool runs in
// the image (it reads a file only the image has) and sees neither the
// runtime's node nor a library path; the verify node after it passes, and
// the run branch holds what the agent wrote.
func TestServeE2ERealCLIInImageFromRuntime(t *testing.T) {
	needSandbox(t)
	c := codexCLI
	bin := agentCLIDir(t, c.program)
	runtimeDir := agentRuntime(t, bin)
	if p, err := exec.LookPath(c.program); err == nil {
		t.Skipf("%s is on this test's PATH (%s): the bare name would find the host's copy", c.program, p)
	}
	base, _ := imagetest.DebianBase(t)
	reg := imagetest.Registry(t)
	ref := reg + "/team/debian-cli:1"
	imagetest.Push(t, ref, cliMarkerImage(t, base))

	srv, network := modelServer(t)
	srv.Reset(c.shell.turn(runtimeProbe), agenttest.Text("Created hello.txt. OUTCOME:SUCCESS"))
	t.Setenv(c.keyEnv, c.key)
	command := `["` + c.program + `", ` + quotedList(c.command[1:]) + `]`
	policy := "images:\n  allow: [\"" + reg + "/team/**\"]\n" +
		"agents:\n  runtime: " + dotQuote(runtimeDir) + "\n  default: codex\n  backends:\n" +
		"    codex: {kind: cli, cli: codex, base_url: " + dotQuote(c.baseURL(srv.URL)) + ", model: " + c.model +
		", command: " + command + "}\n"
	if network != "" {
		policy += "sandbox:\n  network: " + network + "\n  read_only: [" + gateRoot() + "]\n"
	}
	dot := dotFor(`
  fix [shape=box, prompt="Create hello.txt containing hi"]
  check [shape=octagon, command="grep -q hi hello.txt"]
  start -> fix -> check -> exit`)
	e := newE2E(t, e2eOptions{policy: policy, files: map[string]string{"main.go": mainGo, ".kilroy/ci.dot": dot,
		".kilroy/config.yml": "version: 1\nimage: " + ref + "\n"}})
	e.restart() // serve reads its environment (the API key) when it starts
	sha := e.repo.Commit(t, "feature-61", map[string]string{"notes.txt": "x\n"}, "a change")
	e.deliver("pull_request", e.openPR("opened", pr{number: 61, sha: sha, files: []string{"notes.txt"}}))
	e.waitSettled(sha, "kilroy/ci")
	e.waitIdle()
	sum := e.newestSummary(sha)
	if sum.Conclusion != "success" {
		t.Fatalf("kilroy/ci: %s, want success:\n%s\nserve's log:\n%s", sum.Conclusion, sum.Summary, e.logs.String())
	}
	if srv.Calls() < 2 {
		t.Errorf("the fake model server saw %d calls, want the script's 2", srv.Calls())
	}
	want := runtimeProbeSaw
	if got := e.repo.Git(t, "show", "kilroy/run/ci/"+runID(sum)+":hello.txt") + "\n"; got != want {
		t.Errorf("hello.txt on the run branch is %q, want %q", got, want)
	}
}

// quotedList renders args as the items of a YAML flow list.
func quotedList(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = dotQuote(a)
	}
	return strings.Join(q, ", ")
}
