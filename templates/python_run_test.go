package templates_test

import (
	"fmt"
	"maps"
	"os/exec"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

// pythonProject is a module and its pytest test; the assertion is on
// line 5 of test_hello.py.
var pythonProject = map[string]string{
	"hello.py":      "def greet(name):\n    return f\"hello, {name}\"\n",
	"test_hello.py": "from hello import greet\n\n\ndef test_greet():\n    assert greet(\"world\") == \"hello, world\"\n",
}

// The ci-python template runs end to end, with and without the node
// sandbox: a failing test fails the pytest step with a finding on the
// test's line, and a passing suite passes.
func TestCIPythonTemplateRuns(t *testing.T) {
	host := pytestHost(t)
	bothWays(t, func(t *testing.T, sb *sandbox.Sandbox) { testCIPythonTemplateRuns(t, sb, host) })
}

// pytestHost is the bot's environment in which `python3 -m pytest` works:
// the test's own, else, where python3 is a pyenv shim whose version lacks
// pytest, the same with PYENV_VERSION=system (the distribution's
// python3-pytest, which scripts/install-sandbox.sh installs). It skips,
// saying so, when neither works.
func pytestHost(t *testing.T) map[string]string {
	t.Helper()
	host := sandbox.HostEnv()
	system := maps.Clone(host)
	system["PYENV_VERSION"] = "system"
	var out []byte
	for _, env := range []map[string]string{host, system} {
		cmd := exec.Command("python3", "-m", "pytest", "--version")
		cmd.Env = envList(env)
		var err error
		if out, err = cmd.CombinedOutput(); err == nil {
			return env
		}
	}
	t.Skipf("python3 -m pytest does not work here (install python3-pytest: scripts/install-sandbox.sh does): %s", out)
	return nil
}

func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

func testCIPythonTemplateRuns(t *testing.T, sb *sandbox.Sandbox, host map[string]string) {
	tests := []struct {
		name          string
		hello         string // hello.py, when not the sound one
		wantStatus    attractor.Status
		wantFailed    string
		wantCompleted []string
		wantFindings  []string // of the test node: path:line level
	}{
		{
			name: "failing test", hello: "def greet(name):\n    return f\"goodbye, {name}\"\n",
			wantStatus: attractor.StatusFail, wantFailed: "test",
			wantCompleted: []string{"start", "install", "test"},
			wantFindings:  []string{"test_hello.py:5 error"},
		},
		{
			name:          "passing",
			wantStatus:    attractor.StatusSuccess,
			wantCompleted: []string{"start", "install", "test", "exit"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := with(pythonProject, "hello.py", tt.hello)
			res := runGraph(t, sb, newRepo(t, "ci-python", files), "ci", host, nil)
			checkRun(t, res, tt.wantStatus, tt.wantFailed, tt.wantCompleted)
			var findings []string
			for _, f := range res.Outcomes["test"].Findings {
				findings = append(findings, fmt.Sprintf("%s:%d %s", f.Path, f.Line, f.Level))
			}
			if diff := cmp.Diff(findings, tt.wantFindings); diff != "" {
				t.Errorf("pytest findings (-got +want):\n%s\nreason: %s", diff, res.FailureReason)
			}
		})
	}
}
