// Package gittest holds the helpers with which tests drive the real git
// CLI: the user's repository is made and inspected with plain git commands
// (never through gitops, so a gitops bug cannot hide itself), isolated from
// the machine's own git configuration. Only tests import it.
package gittest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// itself), isolated from the machine's own git configuration.

// Path is the git CLI, or the test skips.
func Path(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	return p
}

// Env is the environment of the test's own git commands: no system
// or global config, a fixed identity.
func Env(home string) []string {
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

// Git runs git in dir and returns its trimmed stdout.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := GitErr(t, dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// GitErr is Git returning the error (with git's stderr) instead of failing.
func GitErr(t testing.TB, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(Path(t), args...)
	cmd.Dir = dir
	cmd.Env = Env(dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", &gitError{args: args, err: err, stderr: stderr.String()}
	}
	return strings.TrimRight(string(out), "\n"), nil
}

type gitError struct {
	args   []string
	err    error
	stderr string
}

func (e *gitError) Error() string {
	return "git " + strings.Join(e.args, " ") + ": " + e.err.Error() + ": " + e.stderr
}

// NewRepo makes a repository on branch main whose one commit holds files
// (slash-separated paths).
func NewRepo(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	Git(t, dir, "init", "--quiet", "--initial-branch=main")
	CommitFiles(t, dir, "initial", files)
	return dir
}

// CommitFiles writes files into repo and commits them.
func CommitFiles(t testing.TB, repo, msg string, files map[string]string) string {
	t.Helper()
	for rel, content := range files {
		WriteFile(t, filepath.Join(repo, filepath.FromSlash(rel)), content)
	}
	Git(t, repo, "add", "--all")
	Git(t, repo, "commit", "--quiet", "--allow-empty", "-m", msg)
	return Git(t, repo, "rev-parse", "HEAD")
}

// WriteFile writes content to path, making its directories.
func WriteFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
