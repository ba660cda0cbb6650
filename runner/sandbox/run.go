package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"time"
)

// Defaults for the zero values of Cmd.KillGrace and Cmd.WaitDelay.
const (
	DefaultKillGrace = 5 * time.Second
	DefaultWaitDelay = 2 * time.Second
)

// Cmd describes one process to run.
type Cmd struct {
	Argv    []string  // program and arguments; Argv[0] is looked up in the PATH of Env
	Dir     string    // working directory; empty means the bot's own
	Env     []string  // the complete environment (see NodeEnv); nil means empty, nothing is inherited
	Stdin   io.Reader // nil means empty, never the bot's stdin
	Stdout  io.Writer // nil discards
	Stderr  io.Writer // nil discards; may be the same writer as Stdout
	Timeout time.Duration

	// KillGrace is the time between SIGTERM and SIGKILL to the group after a
	// timeout or cancellation; 0 means DefaultKillGrace.
	KillGrace time.Duration
	// WaitDelay bounds how long Run waits, once the main process has exited,
	// for the rest of its group to close stdout and stderr; 0 means
	// DefaultWaitDelay.
	WaitDelay time.Duration

	// Files are passed to the process as descriptors 3, 4, ... (the
	// bot's git reads its credentials from one). The caller closes them.
	Files []*os.File

	// Jail, when set, runs the process in the sandbox: its own namespaces,
	// only the mounts the Jail names, the Sandbox's resource limits, and
	// nothing of it alive once the main process has exited. Nil runs the
	// process in the bot's own view (the bot's git, nothing from a node).
	Jail *Jail
}

// Result is what happened to a finished process.
type Result struct {
	ExitCode int            // -1 when killed by a signal or not started
	Signal   syscall.Signal // the signal that ended the main process; 0 if it exited
	TimedOut bool           // a deadline (Cmd.Timeout or ctx's) ended the process
	Canceled bool           // ctx was cancelled before the process exited
	// Lingered reports that some process of the group still held stdout or
	// stderr WaitDelay after the main process exited; it was killed.
	Lingered bool
	Duration time.Duration

	limits *Limits // the jail's limits, nil outside a jail
	events cgroupEvents
	// prewarmed: the jail had its mounts made before the Run (Prewarm)
	prewarmed bool
}

// LimitHit names the sandbox limit a failed jailed process most likely
// reached, given the end of its stderr, or "" when nothing points at one.
func (r Result) LimitHit(stderrTail string) string {
	if r.limits == nil || (r.ExitCode == 0 && r.Signal == 0) {
		return ""
	}
	return r.limits.explain(r, r.events, stderrTail)
}

// Run starts c and waits for it and for its output. A non-zero exit is not
// an error: the caller reads Result.ExitCode. The error reports a process
// that could not be started (a *NotFoundError for an unknown program, which
// matches ErrNotFound) or output that could not be delivered to Stdout or
// Stderr; in the latter case the Result is complete.
func Run(ctx context.Context, c Cmd) (Result, error) {
	res := Result{ExitCode: -1}
	if len(c.Argv) == 0 {
		return res, errors.New("sandbox: empty argv")
	}
	path, err := findProgram(c)
	if err != nil {
		return res, err
	}
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	if err := ctx.Err(); err != nil {
		setCause(&res, err)
		return res, fmt.Errorf("sandbox: not starting %q: %w", c.Argv[0], err)
	}
	return run(ctx, c, path)
}

func run(ctx context.Context, c Cmd, path string) (res Result, err error) {
	res = Result{ExitCode: -1}
	waitDelay := orDefault(c.WaitDelay, DefaultWaitDelay)
	argv := slices.Clone(c.Argv)
	argv[0] = path
	var p *proc
	if c.Jail == nil {
		p, err = startPlain(c, argv, waitDelay)
	} else {
		if len(c.Files) > 0 {
			return res, errors.New("sandbox: a jailed process takes no extra files")
		}
		lim := c.Jail.Sandbox.limits
		res.limits = &lim
		p, err = c.Jail.start(c, argv, waitDelay)
	}
	if err != nil {
		return res, err
	}
	res.prewarmed = p.prewarmed
	pgid := p.cmd.Process.Pid // Setpgid makes the child lead a group of its own pid
	if js := p.js; js != nil {
		defer func() {
			res.events = js.cg.finish(res.ExitCode == 0 && res.Signal == 0)
			js.net.release()
		}()
		if err := js.release(); err != nil && !errors.Is(err, errNoSandbox) {
			signalGroup(pgid, syscall.SIGKILL) // nothing of the node may run unlimited
			p.cmd.Wait()
			p.out.finish(waitDelay, func() {})
			return res, fmt.Errorf("sandbox: run %q: %w", c.Argv[0], err)
		}
	}
	exited := make(chan struct{})
	cause := stopGroupOn(ctx, pgid, orDefault(c.KillGrace, DefaultKillGrace), exited)
	waitErr := p.cmd.Wait()
	close(exited)
	setCause(&res, <-cause)
	res.Lingered = p.out.finish(waitDelay, func() { signalGroup(pgid, syscall.SIGKILL) })
	res.Duration = time.Since(p.started)
	setExit(&res, p.cmd)

	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) && !errors.Is(waitErr, exec.ErrWaitDelay) {
		return res, fmt.Errorf("sandbox: run %q: %w", c.Argv[0], waitErr)
	}
	if err := p.out.err(); err != nil {
		return res, fmt.Errorf("sandbox: run %q: %w", c.Argv[0], err)
	}
	return res, nil
}

// proc is a started process with its output attached. A jailed one waits
// in bwrap until js is released.
type proc struct {
	cmd *exec.Cmd
	out *output
	js  *jailStart // nil outside a jail
	// prewarmed: the jail's mounts were made before the Run (Prewarm)
	prewarmed bool
	started   time.Time
}

// startPlain starts argv in the bot's own view.
func startPlain(c Cmd, argv []string, waitDelay time.Duration) (*proc, error) {
	cmd := exec.Command(argv[0])
	cmd.Args = argv
	cmd.Args[0] = c.Argv[0]
	cmd.ExtraFiles = c.Files
	return startCmd(c, cmd, waitDelay)
}

// startCmd starts cmd, which runs c, with c's directory, environment,
// input and output.
func startCmd(c Cmd, cmd *exec.Cmd, waitDelay time.Duration) (*proc, error) {
	cmd.Dir, cmd.Env, cmd.Stdin = c.Dir, execEnv(c.Env), c.Stdin
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// exec still copies a non-file Stdin itself; WaitDelay stops that copy
	// from outliving the process.
	cmd.WaitDelay = waitDelay
	out, err := attachOutput(cmd, c.Stdout, c.Stderr)
	if err != nil {
		return nil, fmt.Errorf("sandbox: run %q: %w", c.Argv[0], err)
	}
	started := time.Now()
	if err := cmd.Start(); err != nil {
		out.abort()
		return nil, fmt.Errorf("sandbox: start %q: %w", c.Argv[0], err)
	}
	out.start()
	return &proc{cmd: cmd, out: out, started: started}, nil
}

// execEnv is env for exec.Cmd.Env: nil would make exec inherit the bot's
// environment.
func execEnv(env []string) []string {
	if env == nil {
		return []string{}
	}
	return env
}

// setCause records why ctx ended the process, if it did.
func setCause(res *Result, cause error) {
	if cause == nil {
		return
	}
	res.TimedOut = errors.Is(cause, context.DeadlineExceeded)
	res.Canceled = !res.TimedOut
}

func setExit(res *Result, cmd *exec.Cmd) {
	ps := cmd.ProcessState
	if ps == nil {
		return
	}
	res.ExitCode = ps.ExitCode()
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.Signal = ws.Signal()
	}
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
