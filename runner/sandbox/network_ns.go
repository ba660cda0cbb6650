package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// pastaTimeout bounds how long a run's namespace may take to be ready.
const pastaTimeout = 30 * time.Second

// netConfig is what every run's namespace is made from.
type netConfig struct {
	pasta   string         // pasta's program
	nsenter string         // nsenter's program, for a bot that is not root (network_user.go)
	allow   []netip.Prefix // sandbox.network_allow
	host    *os.File       // the bot's own network namespace, to come back to
}

// runNS is one run's network namespace and the pasta that connects it.
// Jails join it at their start (do); they need no --unshare-net, and a
// bwrap started inside it has its namespace from its parent, the bot.
type runNS struct {
	ns     *os.File // holds the namespace while the bot has it
	pasta  *exec.Cmd
	exited chan struct{} // closed once pasta is reaped
	// A bot that is not root: the holder of the user and network
	// namespaces (network_user.go), and the command line prefix that
	// starts a program inside them.
	holder       *exec.Cmd
	holderIn     io.Closer
	holderExited chan struct{}
	enter        []string
}

// newRunNS makes a network namespace, has pasta connect it and blocks in
// it everything but public addresses (planRoutes), in that order: no jail
// is in it before newRunNS returns, so none ever sees it open.
//
// The namespace belongs to the bot's user namespace, not a jail's: jail
// users have no capability over it, so no node can change its routes.
// Making it needs CAP_SYS_ADMIN, which the bot has as root; a bot that
// is not root makes a user namespace around it (newUserRunNS).
func newRunNS(cfg netConfig) (*runNS, error) {
	if os.Geteuid() != 0 {
		return newUserRunNS(cfg)
	}
	ns, r, err := makeNetns(cfg.host)
	if err != nil {
		return nil, err
	}
	defer r.close()
	n := &runNS{ns: ns}
	if err := n.startPasta(cfg.pasta, nil); err != nil {
		ns.Close()
		return nil, err
	}
	host, err := hostAddrs()
	if err == nil {
		err = applyRoutes(r, planRoutes(host, cfg.allow))
	}
	if err != nil {
		n.close()
		return nil, fmt.Errorf("sandbox: the run's network namespace: %w", err)
	}
	return n, nil
}

// makeNetns makes a network namespace with its loopback up, on a thread
// locked for the while, which goes back to the bot's namespace (host)
// after, as do's does, and returns the namespace and a netlink socket of
// it (a socket stays in the namespace it was made in). The thread must
// not end there: Linux sends a parent-death signal when the parent
// thread exits, not the process, and the thread may have started jails
// (bwrap's --die-with-parent) or pasta before, which would all be killed.
// Only should the way back fail does it end with its goroutine.
func makeNetns(host *os.File) (ns *os.File, r *rtnl, err error) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		if err = unix.Unshare(unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread() // still in the bot's namespace
			err = fmt.Errorf("sandbox: make a network namespace: %w", err)
			return
		}
		defer func() {
			if unix.Setns(int(host.Fd()), unix.CLONE_NEWNET) == nil {
				runtime.UnlockOSThread()
			}
		}()
		if ns, err = os.Open("/proc/thread-self/ns/net"); err != nil {
			err = fmt.Errorf("sandbox: %w", err)
			return
		}
		if r, err = newRTNL(); err == nil {
			if err = r.linkUp(1); err != nil { // lo is 1 in a new namespace
				r.close()
			}
		}
		if err != nil {
			ns.Close()
			err = fmt.Errorf("sandbox: the run's network namespace: %w", err)
		}
	}()
	<-done
	return ns, r, err
}

// startPasta starts pasta on n's namespace and returns once it has
// configured it: pasta writes its pid file (a pipe here) after its
// interface is up with the host's addresses and default routes, and
// before it serves. Nothing is forwarded in either direction but the
// namespace's own connections out (-t, -u, -T, -U none), its gateway is
// not the host (--no-map-gw), and it offers no DHCP. UDP queries to
// dnsForward's port 53 go to the host's name server (see dnsForward).
// It runs as the bot (--runas, or as root it would drop to nobody, who cannot join the
// namespace) and is killed if the bot dies. userns, if not nil, is the
// user namespace that owns the network namespace (a holder's), which
// pasta joins to configure it.
func (n *runNS) startPasta(pasta string, userns *os.File) error {
	pidR, pidW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("sandbox: pasta: %w", err)
	}
	defer pidR.Close()
	files := []*os.File{n.ns, pidW}
	args := []string{"--quiet", "--foreground", "--config-net", "--no-netns-quit"}
	if userns != nil {
		// Before --netns, which without it means that namespace only.
		args = append(args, "--userns", "/proc/self/fd/5")
		files = append(files, userns)
	}
	args = append(args, "--netns", "/proc/self/fd/3", "--pid", "/proc/self/fd/4",
		"-t", "none", "-u", "none", "-T", "none", "-U", "none",
		"--no-map-gw", "--no-dhcp", "--no-dhcpv6", "--dns-forward", dnsForward.String())
	if os.Geteuid() == 0 {
		args = append(args, "--runas", "0:0")
	}
	cmd := exec.Command(pasta, args...)
	cmd.Env = []string{}
	errTail := NewTail(4 << 10)
	cmd.Stdout, cmd.Stderr = errTail, errTail
	cmd.ExtraFiles = files
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	err = cmd.Start()
	pidW.Close()
	if err != nil {
		return fmt.Errorf("sandbox: start pasta: %w", err)
	}
	n.pasta, n.exited = cmd, make(chan struct{})
	go func() { cmd.Wait(); close(n.exited) }()
	pidR.SetReadDeadline(time.Now().Add(pastaTimeout))
	// pasta writes "PID\n" and keeps the file open; EOF means it exited.
	line, err := bufio.NewReader(io.LimitReader(pidR, 64)).ReadString('\n')
	if err == io.EOF || (err == nil && strings.TrimSpace(line) == "") {
		err = errors.New("it exited")
	}
	if err != nil {
		n.stopPasta()
		msg := strings.TrimSpace(string(errTail.Bytes()))
		return fmt.Errorf("sandbox: pasta did not configure the run's network namespace (%v): %s", err, msg)
	}
	return nil
}

// stopPasta kills pasta and waits until it is reaped.
func (n *runNS) stopPasta() {
	if n.pasta != nil {
		n.pasta.Process.Kill()
		<-n.exited
	}
}

// close ends pasta and lets go of the namespace, which the kernel
// removes once no jail is in it either.
func (n *runNS) close() { n.end(true) }

// end is close, waiting for pasta (and a holder) to be reaped or only
// killing them.
func (n *runNS) end(wait bool) {
	if wait {
		n.stopPasta()
	} else if n.pasta != nil {
		n.pasta.Process.Kill() // reaped by startPasta's goroutine
	}
	if n.holder != nil {
		n.holderIn.Close()
		n.holder.Process.Kill()
		if wait {
			<-n.holderExited
		}
	}
	if n.ns != nil {
		n.ns.Close()
	}
}

// do runs f, which starts a process, on a thread inside the namespace, so
// that the process is born in it. The thread comes back to the bot's
// namespace (host) after; should that ever fail, it ends with the
// goroutine instead of serving the bot from the run's namespace (and a
// bwrap it started dies with it: --die-with-parent).
func (n *runNS) do(host *os.File, f func()) error {
	if n.enter != nil {
		f() // the process starts through nsenter (n.enter)
		return nil
	}
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		if err = unix.Setns(int(n.ns.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			err = fmt.Errorf("sandbox: join the run's network namespace: %w", err)
			return
		}
		f()
		if unix.Setns(int(host.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
	}()
	<-done
	return err
}

// openOwnNetns opens the network namespace of the calling thread.
func openOwnNetns() (*os.File, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	f, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	return f, nil
}
