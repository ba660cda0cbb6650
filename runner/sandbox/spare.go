package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// spare is a jail made ahead of need: a bwrap already started, already in
// a fresh node cgroup pair, blocked reading its options from a pipe. Run
// writes a node's options and the node's namespaces and mounts are made,
// every process of it born inside the cgroups: joining a cgroup, which
// can wait for an RCU grace period, is off the node's critical path.
type spare struct {
	cmd            *exec.Cmd
	js             *jailStart
	args           *os.File // the bot's end of bwrap's fd 5
	stdout, stderr *os.File // the bot's ends of bwrap's stdout and stderr
}

// makeSpare starts a spare bwrap (spareArgv) with an empty environment,
// stdin /dev/null and pipes for its output, and moves it into a fresh
// node cgroup pair. Its pids.max is one above the process limit: bwrap's
// monitor, which cold jails keep outside, counts there too.
func (s *Sandbox) makeSpare() (*spare, error) { return s.makeSpareIn(nil) }

// makeSpareIn is makeSpare inside the run's namespace n (network public),
// or where the bot is for nil.
func (s *Sandbox) makeSpareIn(n *runNS) (sp *spare, err error) {
	argsR, argsW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: spare jail: %w", err)
	}
	if n == nil {
		sp, err = s.startPiped(spareArgv(s.bwrap), nil, 1, argsR)
	} else if derr := n.do(s.nets.cfg.host, func() {
		sp, err = s.startPiped(slices.Concat(n.enter, spareArgv(s.bwrap)), nil, 1, argsR)
	}); derr != nil {
		err = derr
	}
	argsR.Close()
	if err != nil {
		argsW.Close()
		return nil, err
	}
	sp.args = argsW
	// bwrap reads its options before it does anything else: nothing of
	// it has forked yet.
	if err := sp.js.cg.join(sp.cmd.Process.Pid); err != nil {
		sp.discard()
		return nil, err
	}
	sp.js.inCgroup = true
	return sp, nil
}

// startPiped starts the bwrap command line argv with environment env,
// stdin /dev/null, pipes for its output, the handshake's descriptors as
// fds 3 and 4 and extra after them, in a process group of its own and
// with fresh node cgroups of the given headroom (newJailStart): a spare
// (makeSpare) and a prewarmed jail (Jail.prewarm) start so.
func (s *Sandbox) startPiped(argv, env []string, headroom int, extra ...*os.File) (*spare, error) {
	js, err := newJailStart(s, headroom)
	if err != nil {
		return nil, err
	}
	sp := &spare{js: js}
	var outW, errW *os.File
	if sp.stdout, outW, err = os.Pipe(); err == nil {
		sp.stderr, errW, err = os.Pipe()
	}
	if err != nil {
		closeAll(outW, sp.stdout)
		js.abort()
		return nil, fmt.Errorf("sandbox: spare jail: %w", err)
	}
	cmd := exec.Command(argv[0])
	cmd.Args, cmd.Env = argv, execEnv(env)
	cmd.Stdout, cmd.Stderr = outW, errW
	cmd.ExtraFiles = append(js.childFiles(), extra...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	closeAll(outW, errW)
	js.closeChildEnds()
	if err != nil {
		closeAll(sp.stdout, sp.stderr)
		js.abort()
		return nil, fmt.Errorf("sandbox: start a spare jail: %w", err)
	}
	sp.cmd = cmd
	return sp, nil
}

// launch hands c's jail options to the spare and attaches c's output; the
// caller releases the returned proc as a cold one. An error means the
// spare was gone (killed while idle); it has been discarded.
func (sp *spare) launch(c Cmd, opts []string) (*proc, error) {
	started := time.Now()
	if err := sp.send(opts); err != nil {
		sp.discard()
		return nil, fmt.Errorf("sandbox: spare jail: %w", err)
	}
	return sp.attach(c, started), nil
}

// attach gives c the output of a spare that has its options (launch, or
// Prewarm); the caller releases the returned proc as a cold one.
func (sp *spare) attach(c Cmd, started time.Time) *proc {
	out := pipedOutput(sp.stdout, sp.stderr, c.Stdout, c.Stderr)
	out.start()
	return &proc{cmd: sp.cmd, out: out, js: sp.js, spare: true, started: started}
}

// send writes opts, NUL-terminated, and closes the pipe: bwrap reads
// options until EOF.
func (sp *spare) send(opts []string) error {
	n := 0
	for _, o := range opts {
		n += len(o) + 1
	}
	b := make([]byte, 0, n)
	for _, o := range opts {
		b = append(append(b, o...), 0)
	}
	_, err := sp.args.Write(b)
	if cerr := sp.args.Close(); err == nil {
		err = cerr
	}
	return err
}

// exited reports whether the spare's bwrap has ended (not reaped yet).
func (sp *spare) exited() bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, sp.cmd.Process.Pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return err != nil || info.Signo != 0
}

// discard kills and reaps an unused spare and removes its cgroups.
func (sp *spare) discard() {
	if sp.cmd != nil {
		signalGroup(sp.cmd.Process.Pid, syscall.SIGKILL)
	}
	closeAll(sp.args, sp.stdout, sp.stderr)
	if sp.cmd != nil {
		sp.cmd.Wait()
	}
	sp.js.close()
	if sp.js.cg != nil {
		sp.js.cg.remove()
	}
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
}
