package templates_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/runner"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
	"github.com/kilroy-bot/kilroy-bot/templates"
)

// helloMain is a tiny program whose Printf verb on line 7 is the only
// thing that differs between the two runs.
const helloMain = `package main

import "fmt"

func main() {
	name := "world"
	fmt.Printf("hello, %s\n", name)
}
`

// The ci-go template, copied as the README says, runs end to end, with and
// without the node sandbox: go vet fails on a wrong Printf verb with a
// finding on its line, and once the verb is right every step passes.
func TestCIGoTemplateRuns(t *testing.T) { bothWays(t, testCIGoTemplateRuns) }

// bothWays runs test unjailed (sb nil) and in the node sandbox, which it
// skips with one line where the sandbox cannot work.
func bothWays(t *testing.T, test func(t *testing.T, sb *sandbox.Sandbox)) {
	for _, jailed := range []bool{false, true} {
		t.Run(map[bool]string{false: "unjailed", true: "sandbox"}[jailed], func(t *testing.T) {
			var sb *sandbox.Sandbox
			if jailed {
				sb = testSandbox(t)
			}
			test(t, sb)
		})
	}
}

// testSandbox is a node sandbox, or a skip saying why there is none here.
func testSandbox(t *testing.T) *sandbox.Sandbox {
	s, err := sandbox.New(sandbox.Config{PATH: sandbox.HostEnv()["PATH"], StateDir: t.TempDir()})
	if err == nil {
		err = s.SelfTest(t.Context())
	}
	if err != nil {
		t.Skipf("no node sandbox here: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// runGraph runs pipeline graph of repo locally, through sb when not nil,
// with host as the bot's environment (nil: the test's own) and the agent
// newAgent builds (nil for none).
func runGraph(t *testing.T, sb *sandbox.Sandbox, repo, graph string, host map[string]string, newAgent runner.AgentFactory) *attractor.RunResult {
	t.Helper()
	if host == nil {
		host = sandbox.HostEnv()
	}
	_, res, err := runner.RunLocal(t.Context(), runner.LocalOptions{
		RepoDir:  repo,
		Graph:    graph,
		DataDir:  t.TempDir(),
		Env:      runner.EnvInputs{Host: host, Sandbox: sb},
		NewAgent: newAgent,
	})
	if err != nil {
		t.Fatalf("RunLocal: %v", err)
	}
	return res
}

// checkRun compares the run's status, failed node and completed nodes.
func checkRun(t *testing.T, res *attractor.RunResult, status attractor.Status, failed string, completed []string) {
	t.Helper()
	got := []any{res.Status, res.FailedNode, res.Completed}
	want := []any{status, failed, completed}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("status, failed node, completed (-got +want):\n%s\nreason: %s", diff, res.FailureReason)
	}
}

func testCIGoTemplateRuns(t *testing.T, sb *sandbox.Sandbox) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not on PATH: running the ci-go template needs the go command")
	}
	tests := []struct {
		name          string
		verb          string
		wantStatus    attractor.Status
		wantFailed    string
		wantCompleted []string
		wantFindings  []string // of the vet node: path:line tool level
	}{
		{
			name: "vet error", verb: "%d",
			wantStatus: attractor.StatusFail, wantFailed: "vet",
			wantCompleted: []string{"start", "build", "vet"},
			wantFindings:  []string{"main.go:7 go error"},
		},
		{
			name: "fixed", verb: "%s",
			wantStatus:    attractor.StatusSuccess,
			wantCompleted: []string{"start", "build", "vet", "test", "artifacts", "exit"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := newRepo(t, "ci-go", map[string]string{
				"go.mod":        "module example.com/hello\n\ngo 1.22\n",
				"main.go":       strings.Replace(helloMain, "%s", tt.verb, 1),
				"hello_test.go": "package main\n\nimport \"testing\"\n\nfunc TestHello(t *testing.T) {}\n",
			})
			res := runGraph(t, sb, repo, "ci", nil, nil)
			checkRun(t, res, tt.wantStatus, tt.wantFailed, tt.wantCompleted)
			var findings []string
			for _, f := range res.Outcomes["vet"].Findings {
				findings = append(findings, fmt.Sprintf("%s:%d %s %s", f.Path, f.Line, f.Tool, f.Level))
			}
			if diff := cmp.Diff(findings, tt.wantFindings); diff != "" {
				t.Errorf("vet findings (-got +want):\n%s", diff)
			}
		})
	}
}

// newRepo makes a git repository holding template tmpl copied to its root
// plus files, in one commit on main.
func newRepo(t *testing.T, tmpl string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	sub, err := fs.Sub(templates.FS(), tmpl)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(dir, sub); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "init", "--quiet", "--initial-branch=main")
	git(t, dir, "add", "--all")
	git(t, dir, "commit", "--quiet", "-m", "start from the "+tmpl+" template")
	return dir
}

// git runs git in dir, isolated from the machine's git configuration.
func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	// GIT_DIR and friends from a hook running the tests would point the
	// commands at another repository.
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "GIT_") }),
		"HOME="+t.TempDir(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=Test User", "GIT_AUTHOR_EMAIL=test@example.invalid",
		"GIT_COMMITTER_NAME=Test User", "GIT_COMMITTER_EMAIL=test@example.invalid",
	)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
}
