// Package sandbox is the only place that starts a process or builds a child
// environment. Every process runs in its own process group so a timeout or
// cancellation kills the whole tree, with a WaitDelay so a daemonised
// grandchild holding stdout cannot hang the caller.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"
)

// Cmd describes one process to run.
type Cmd struct {
	Argv    []string  // program and arguments; Argv[0] is looked up in PATH of Env
	Dir     string    // working directory
	Env     []string  // the complete environment; nothing is inherited
	Stdin   io.Reader // nil means empty
	Stdout  io.Writer // nil discards
	Stderr  io.Writer // nil discards
	Timeout time.Duration
}

// Result is what happened to a finished process.
type Result struct {
	ExitCode int // -1 when killed by a signal or not started
	TimedOut bool
	Canceled bool
	Duration time.Duration
}

// Run starts c and waits for it. A non-zero exit is not an error: the
// caller reads Result.ExitCode. The error reports a failure to start.
func Run(ctx context.Context, c Cmd) (Result, error) {
	if len(c.Argv) == 0 {
		return Result{ExitCode: -1}, errors.New("sandbox: empty argv")
	}
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, c.Argv[0], c.Argv[1:]...)
	cmd.Dir, cmd.Env = c.Dir, c.Env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = c.Stdin, c.Stdout, c.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	start := time.Now()
	err := cmd.Run()
	res := Result{ExitCode: cmd.ProcessState.ExitCode(), Duration: time.Since(start)}
	if ctx.Err() != nil {
		res.TimedOut = errors.Is(ctx.Err(), context.DeadlineExceeded)
		res.Canceled = !res.TimedOut
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) && !errors.Is(err, exec.ErrWaitDelay) {
		return res, fmt.Errorf("sandbox: run %q: %w", c.Argv[0], err)
	}
	return res, nil
}
