package server

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/runner"
)

// These helpers are copies of runner's test helpers (helpers_test.go) that
// the server's tests use: test files cannot be shared between packages.

// Tests drive the real git CLI: the user's repository is made and inspected
// with plain git commands (never through gitops, so a gitops bug cannot hide
// itself), isolated from the machine's own git configuration.

func gitPath(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	return p
}

// testGitEnv is the environment of the test's own git commands: no system
// or global config, a fixed identity.
func testGitEnv(home string) []string {
	// GIT_DIR and friends from a hook that runs the tests would redirect
	// every command to the wrong repository.
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "GIT_") })
	return append(env,
		"HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=Test User", "GIT_AUTHOR_EMAIL=test@example.invalid",
		"GIT_COMMITTER_NAME=Test User", "GIT_COMMITTER_EMAIL=test@example.invalid",
		"GIT_TERMINAL_PROMPT=0",
	)
}

// git runs git in dir and returns its trimmed stdout.
func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := gitErr(t, dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func gitErr(t testing.TB, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(gitPath(t), args...)
	cmd.Dir = dir
	cmd.Env = testGitEnv(dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", &gitTestError{args: args, err: err, stderr: stderr.String()}
	}
	return strings.TrimRight(string(out), "\n"), nil
}

type gitTestError struct {
	args   []string
	err    error
	stderr string
}

func (e *gitTestError) Error() string {
	return "git " + strings.Join(e.args, " ") + ": " + e.err.Error() + ": " + e.stderr
}

// newRepo makes a repository on branch main whose one commit holds files
// (slash-separated paths).
func newRepo(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "--quiet", "--initial-branch=main")
	commitFiles(t, dir, "initial", files)
	return dir
}

// commitFiles writes files into repo and commits them.
func commitFiles(t testing.TB, repo, msg string, files map[string]string) string {
	t.Helper()
	for rel, content := range files {
		writeFile(t, filepath.Join(repo, filepath.FromSlash(rel)), content)
	}
	git(t, repo, "add", "--all")
	git(t, repo, "commit", "--quiet", "--allow-empty", "-m", msg)
	return git(t, repo, "rev-parse", "HEAD")
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// testEnv is a node environment with a private HOME and the test's PATH.
func testEnv(t testing.TB) runner.EnvInputs {
	t.Helper()
	return runner.EnvInputs{Host: map[string]string{"PATH": os.Getenv("PATH"), "HOME": t.TempDir()}}
}
