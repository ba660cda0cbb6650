package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// warmJail is a prewarmed jail's bwrap (Jail.prewarm): started with its
// node's command, mounts and bind descriptors, its output on pipes of its
// own, blocked on its handshake until the Run that adopts it releases it.
type warmJail struct {
	cmd            *exec.Cmd
	js             *jailStart
	stdout, stderr *os.File // the bot's ends of bwrap's stdout and stderr
}

// startWarm starts the bwrap command line argv with environment env,
// stdin /dev/null, pipes for its output, the handshake's descriptors as
// fds 3 and 4 and the bind sources and its options file after them, in a process group of its
// own and with fresh node cgroups of the given headroom (newJailStart).
func (s *Sandbox) startWarm(argv, env []string, headroom int, binds ...*os.File) (*warmJail, error) {
	js, err := newJailStart(s, headroom)
	if err != nil {
		return nil, err
	}
	w := &warmJail{js: js}
	var outW, errW *os.File
	if w.stdout, outW, err = os.Pipe(); err == nil {
		w.stderr, errW, err = os.Pipe()
	}
	if err != nil {
		closeAll(outW, w.stdout)
		js.abort()
		return nil, fmt.Errorf("sandbox: prewarmed jail: %w", err)
	}
	cmd := exec.Command(argv[0])
	cmd.Args, cmd.Env = argv, execEnv(env)
	cmd.Stdout, cmd.Stderr = outW, errW
	cmd.ExtraFiles = append(js.childFiles(), binds...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	closeAll(outW, errW)
	js.closeChildEnds()
	if err != nil {
		closeAll(w.stdout, w.stderr)
		js.abort()
		return nil, fmt.Errorf("sandbox: start a prewarmed jail: %w", err)
	}
	w.cmd = cmd
	return w, nil
}

// attach gives c the output of the jail; the caller releases the
// returned proc as a cold one.
func (w *warmJail) attach(c Cmd, started time.Time) *proc {
	out := pipedOutput(w.stdout, w.stderr, c.Stdout, c.Stderr)
	out.start()
	return &proc{cmd: w.cmd, out: out, js: w.js, started: started}
}

// exited reports whether the jail's bwrap has ended (not reaped yet).
func (w *warmJail) exited() bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, w.cmd.Process.Pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return err != nil || info.Signo != 0
}

// discard kills and reaps an unused jail and removes its cgroups.
func (w *warmJail) discard() {
	if w.cmd != nil {
		signalGroup(w.cmd.Process.Pid, syscall.SIGKILL)
	}
	closeAll(w.stdout, w.stderr)
	if w.cmd != nil {
		w.cmd.Wait()
	}
	w.js.close()
	if w.js.cg != nil {
		w.js.cg.remove()
	}
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
}
