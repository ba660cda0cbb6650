package ghapptest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// gitEnv runs git for the fake with a hardened environment: no system or
// global configuration, no prompts, a private HOME, so the developer's git
// setup cannot change what the tests see.
type gitEnv struct {
	bin  string
	home string
}

func newGitEnv(home string) (gitEnv, error) {
	bin, err := exec.LookPath("git")
	if err != nil {
		return gitEnv{}, fmt.Errorf("find git: %w", err)
	}
	return gitEnv{bin: bin, home: home}, nil
}

// env is the complete environment of every git the fake starts, plus extra.
func (g gitEnv) env(extra ...string) []string {
	return append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + g.home,
		"XDG_CONFIG_HOME=" + g.home,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + os.DevNull,
		"GIT_ATTR_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0",
		"LC_ALL=C",
	}, extra...)
}

// run runs git in dir and returns its standard output.
func (g gitEnv) run(ctx context.Context, dir string, stdin io.Reader, extraEnv []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, g.bin, args...)
	cmd.Dir = dir
	cmd.Env = g.env(extraEnv...)
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", &gitError{args: args, err: err, stderr: strings.TrimSpace(stderr.String())}
	}
	return stdout.String(), nil
}

// gitError is a failed git command with what it said.
type gitError struct {
	args   []string
	err    error
	stderr string
}

func (e *gitError) Error() string {
	return fmt.Sprintf("git %s: %v: %s", strings.Join(e.args, " "), e.err, e.stderr)
}

func (e *gitError) Unwrap() error { return e.err }

// quiet reports whether git failed without a word, as "rev-parse -q" and
// "cat-file -e" do for a missing object.
func quiet(err error) bool {
	var ge *gitError
	return errors.As(err, &ge) && ge.stderr == ""
}
