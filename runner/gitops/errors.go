package gitops

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinels callers branch on with errors.Is.
var (
	// ErrNotRepository: the directory is not inside a git repository.
	ErrNotRepository = errors.New("not a git repository")
	// ErrNoCommit: HEAD names a branch that has no commit yet (a fresh
	// `git init`), so there is nothing to start a run from.
	ErrNoCommit = errors.New("no commit yet")
	// ErrWorktreeBroken: a node deleted or replaced the worktree's .git, so
	// no checkpoint can be committed; earlier ones are safe on the branch.
	ErrWorktreeBroken = errors.New("worktree's .git is missing or broken")
	// ErrHeadMoved: the worktree's HEAD is no longer on the run branch.
	ErrHeadMoved = errors.New("worktree HEAD is not on the run branch")
)

// maxStderr caps the stderr kept in an Error; git's verdict is at the end.
const maxStderr = 4096

// Error is a git invocation that exited non-zero, timed out or was
// canceled. Argv never holds a credential and Stderr is redacted.
type Error struct {
	Argv     []string
	Dir      string
	ExitCode int
	Stderr   string
	TimedOut bool

	shown int   // index in Argv where the caller's arguments start
	cause error // ctx.Err() when canceled or timed out
}

func (e *Error) Error() string {
	args := e.Argv
	if e.shown > 0 && e.shown <= len(args) {
		args = args[e.shown:]
	}
	state := fmt.Sprintf("exit %d", e.ExitCode)
	switch {
	case e.TimedOut:
		state = "timed out"
	case e.cause != nil:
		state = "canceled"
	}
	msg := fmt.Sprintf("git %s (in %s): %s", strings.Join(args, " "), e.Dir, state)
	if e.Stderr != "" {
		msg += ": " + e.Stderr
	}
	return msg
}

// Unwrap exposes the context error of a canceled or timed-out call.
func (e *Error) Unwrap() error { return e.cause }

// MergeConflictError reports a merge of parallel branches that conflicted.
// The merge was aborted and the run branch reset to where it was.
type MergeConflictError struct {
	Branch string   // the branch whose merge conflicted
	Paths  []string // conflicted paths, sorted
}

func (e *MergeConflictError) Error() string {
	return fmt.Sprintf("merge conflict merging %s: %s", e.Branch, strings.Join(e.Paths, ", "))
}

// redact replaces every secret in s.
func redact(s string, secrets []string) string {
	for _, sec := range secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, "[REDACTED]")
		}
	}
	return s
}

// capStderr trims s and keeps its tail when it is too long.
func capStderr(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= maxStderr {
		return s
	}
	return "…" + s[len(s)-maxStderr:]
}

// Public is the error as it may be shown outside the host: the git
// subcommand, how it ended and git's last line of stderr, without the
// argument list or the directory (which name the host's paths).
func (e *Error) Public() string {
	sub := "git"
	for _, a := range e.Argv[min(e.shown, len(e.Argv)):] {
		if !strings.HasPrefix(a, "-") {
			sub = "git " + a // the subcommand: options such as --git-dir come first
			break
		}
	}
	state := fmt.Sprintf("exited %d", e.ExitCode)
	switch {
	case e.TimedOut:
		state = "timed out"
	case e.cause != nil:
		state = "was canceled"
	}
	msg := sub + " " + state
	if last := lastLine(e.Stderr); last != "" {
		msg += ": " + last
	}
	return msg
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[i+1:])
	}
	return s
}
