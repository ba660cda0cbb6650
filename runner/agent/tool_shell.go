package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

const (
	shellOutputLimit = 30_000
	shellKeepBytes   = 1 << 20 // in memory, before truncation for the model
	shellKillGrace   = 2 * time.Second
)

// shellTool runs a command with bash in the worktree, through the sandbox,
// with a tool node's environment: same toolchain, no secrets, no key.
type shellTool struct {
	dir        string
	env        []string
	jail       *sandbox.Jail
	timeout    time.Duration
	maxTimeout time.Duration
}

func (t shellTool) spec() ToolSpec {
	return ToolSpec{
		Name: "shell",
		Description: fmt.Sprintf("Run a bash command in the worktree and return its exit code and output (stdout and stderr interleaved). "+
			"Default timeout %s, at most %s.", t.timeout, t.maxTimeout),
		Schema: schema([]string{"command"}, map[string]any{
			"command":    prop("string", "the bash command"),
			"timeout_ms": prop("integer", "timeout in milliseconds"),
		}),
	}
}

func (t shellTool) run(ctx context.Context, raw json.RawMessage) (string, error) {
	var a struct {
		Command     string `json:"command"`
		TimeoutMS   int64  `json:"timeout_ms"`
		Description string `json:"description"` // accepted: models like to say what a command is for
	}
	if err := decodeArgs(raw, &a, "command"); err != nil {
		return "", err
	}
	if strings.TrimSpace(a.Command) == "" {
		return "", errors.New("command is empty")
	}
	timeout := t.timeout
	if a.TimeoutMS > 0 {
		timeout = min(time.Duration(a.TimeoutMS)*time.Millisecond, t.maxTimeout)
	}
	out := sandbox.NewTail(shellKeepBytes)
	res, err := sandbox.Run(ctx, sandbox.Cmd{
		Argv: []string{"bash", "-c", a.Command}, Dir: t.dir, Env: t.env,
		Stdout: out, Stderr: out, Timeout: timeout, KillGrace: shellKillGrace, Jail: t.jail,
	})
	if err != nil && res.ExitCode == -1 && !res.TimedOut && !res.Canceled {
		return "", err
	}
	var b strings.Builder
	switch {
	case res.TimedOut && ctx.Err() == nil:
		fmt.Fprintf(&b, "[command timed out after %s and was killed; partial output below. Set timeout_ms (up to %d) to allow longer.]\n",
			timeout, t.maxTimeout.Milliseconds())
	case res.Canceled || ctx.Err() != nil:
		b.WriteString("[command stopped: the node is being cancelled]\n")
	default:
		fmt.Fprintf(&b, "exit code %d (%.1fs)\n", res.ExitCode, res.Duration.Seconds())
	}
	if out.Truncated() {
		fmt.Fprintf(&b, "[only the last %d of %d output bytes were kept]\n", shellKeepBytes, out.Written())
	}
	b.Write(out.Bytes())
	return truncate(b.String(), shellOutputLimit, headTail), nil
}
