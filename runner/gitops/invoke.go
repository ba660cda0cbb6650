package gitops

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

// call is one git invocation.
type call struct {
	dir   string   // working directory
	args  []string // git arguments after the hardening options
	stdin io.Reader
	// env adds variables (identity) to the hardened base.
	env []string
	// config are -c settings after the hardening; files are passed to git
	// as fds 3, 4, ... (the token's config, see withAuth).
	config []string
	files  []*os.File
	// secrets are redacted from stderr before it reaches an error.
	secrets []string
	// readOnly marks queries that must not even refresh the index: they may
	// run against the user's repository while the user works in it.
	readOnly bool
	// pinned stops repository discovery at dir's parent, so a worktree whose
	// .git a node deleted is an error, not a walk up into an enclosing repo.
	pinned bool
}

// hardening is prepended to every invocation. -c beats every config file,
// including the repository's own, so a repository cannot re-enable hooks,
// an fsmonitor daemon, credential helpers or commit signing for the bot.
func (g *Git) hardening() []string {
	fileProto := "never"
	if g.opts.AllowFileProtocol {
		fileProto = "always"
	}
	return []string{
		"-c", "core.hooksPath=/dev/null",
		"-c", "core.fsmonitor=false",
		"-c", "maintenance.auto=false",
		"-c", "gc.auto=0",
		"-c", "core.askPass=",
		"-c", "credential.helper=",
		"-c", "commit.gpgSign=false",
		"-c", "core.safecrlf=false",
		"-c", "submodule.recurse=false",
		"-c", "fetch.recurseSubmodules=false",
		"-c", "init.defaultBranch=main",
		"-c", "protocol.ext.allow=never",
		"-c", "protocol.file.allow=" + fileProto,
	}
}

// baseEnv is the complete environment of a git process: nothing is
// inherited from the bot.
func (g *Git) baseEnv(c call) []string {
	env := []string{
		"PATH=" + g.pathEnv,
		"HOME=" + g.home,
		"XDG_CONFIG_HOME=" + filepath.Join(g.home, ".config"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_ASKPASS=",
		"SSH_ASKPASS=",
		"LC_ALL=C",
		"LANG=C",
		"GIT_AUTHOR_NAME=" + g.identity.Name,
		"GIT_AUTHOR_EMAIL=" + g.identity.Email,
		"GIT_COMMITTER_NAME=" + g.identity.Name,
		"GIT_COMMITTER_EMAIL=" + g.identity.Email,
	}
	if c.readOnly {
		env = append(env, "GIT_OPTIONAL_LOCKS=0")
	}
	if c.pinned {
		env = append(env, "GIT_CEILING_DIRECTORIES="+filepath.Dir(filepath.Clean(c.dir)))
	}
	// Later entries win in exec, so per-call identity overrides the bot's.
	return append(env, c.env...)
}

// run executes c and returns stdout. A non-zero exit is an *Error.
func (g *Git) run(ctx context.Context, c call) ([]byte, error) {
	defer func() {
		for _, f := range c.files {
			f.Close()
		}
	}()
	argv := append([]string{g.path}, g.hardening()...)
	for _, kv := range c.config {
		argv = append(argv, "-c", kv)
	}
	shown := len(argv)
	argv = append(argv, c.args...)
	var stdout, stderr bytes.Buffer
	res, err := sandbox.Run(ctx, sandbox.Cmd{
		Argv:    argv,
		Dir:     c.dir,
		Env:     g.baseEnv(c),
		Stdin:   c.stdin,
		Stdout:  &stdout,
		Stderr:  &stderr,
		Timeout: g.opts.Timeout,
		Files:   c.files,
	})
	if err != nil {
		return nil, fmt.Errorf("gitops: start git %s: %w", c.args, err)
	}
	if res.ExitCode == 0 && !res.TimedOut && !res.Canceled {
		return stdout.Bytes(), nil
	}
	gerr := &Error{
		Argv:     argv,
		Dir:      c.dir,
		ExitCode: res.ExitCode,
		Stderr:   capStderr(redact(stderr.String(), c.secrets)),
		TimedOut: res.TimedOut,
		shown:    shown,
	}
	if res.Canceled || res.TimedOut {
		gerr.cause = ctx.Err()
	}
	return stdout.Bytes(), gerr
}

// runStr is run with stdout returned as a trimmed string.
func (g *Git) runStr(ctx context.Context, c call) (string, error) {
	out, err := g.run(ctx, c)
	return string(bytes.TrimSpace(out)), err
}
