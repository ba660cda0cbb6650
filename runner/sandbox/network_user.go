package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A bot that is not root (the image's user) cannot make a network
// namespace of its own: it needs CAP_SYS_ADMIN where it is. It makes one
// with a user namespace around it instead, in a holder: the bot's own
// program started again (holderEnv) by a clone into a new user and
// network namespace, where the bot's user is root. The holder configures
// the namespace it was born in (the bot's threads could not join it: a
// process of many threads cannot enter a user namespace) and then waits,
// holding it, until the bot closes its stdin. pasta joins both namespaces
// as the same unprivileged user, and every jail's bwrap starts inside
// them through nsenter, single-threaded, which the user namespace's owner
// may do. A jail is a user namespace inside the holder's: no node has a
// capability over the namespace's routes.

// holderEnv marks a process started as a run's namespace holder.
const holderEnv = "KILROY_SANDBOX_NETNS_HOLDER"

func init() {
	if os.Getenv(holderEnv) == "1" {
		os.Exit(runHolder(os.Stdin, os.Stdout))
	}
}

// runHolder is the holder's program. It brings its loopback up and says
// "ready"; reads the routes to set once pasta is there ("block PREFIX",
// "open PREFIX", then "end"), sets them and says "ok" (or "error: ...");
// and then waits for EOF.
func runHolder(in io.Reader, out io.Writer) int {
	r, err := newRTNL()
	if err == nil {
		err = r.linkUp(1)
	}
	if err != nil {
		fmt.Fprintf(out, "error: %v\n", err)
		return 1
	}
	fmt.Fprintln(out, "ready")
	var plan routePlan
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		kind, v, _ := strings.Cut(sc.Text(), " ")
		if kind == "end" {
			if err := applyRoutes(r, plan); err != nil {
				fmt.Fprintf(out, "error: %v\n", err)
				return 1
			}
			r.close()
			fmt.Fprintln(out, "ok")
			io.Copy(io.Discard, in) // hold the namespace until the bot lets go
			return 0
		}
		p, err := netip.ParsePrefix(v)
		if err != nil {
			fmt.Fprintf(out, "error: %v\n", err)
			return 1
		}
		switch kind {
		case "block":
			plan.block = append(plan.block, p)
		case "open":
			plan.open = append(plan.open, p)
		}
	}
	return 1
}

// newUserRunNS is newRunNS for a bot that is not root: a holder's
// namespaces, pasta attached to them, and then the routes, set by the
// holder.
func newUserRunNS(cfg netConfig) (*runNS, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, networkError(fmt.Errorf("sandbox: the bot's own program: %w", err))
	}
	holder := exec.Command(self)
	holder.Env = []string{holderEnv + "=1"}
	holder.Stderr = NewTail(4 << 10)
	stdin, err := holder.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	stdoutR, err := holder.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	holder.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  unix.CLONE_NEWUSER | unix.CLONE_NEWNET,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}},
		Setpgid:     true,
		Pdeathsig:   syscall.SIGKILL,
	}
	if err := holder.Start(); err != nil {
		return nil, networkError(fmt.Errorf("sandbox: make the run's user and network namespaces (network public needs "+
			"unprivileged user namespaces when the bot is not root): %w", err))
	}
	n := &runNS{holder: holder, holderIn: stdin}
	holderExited := make(chan struct{})
	go func() { holder.Wait(); close(holderExited) }()
	n.holderExited = holderExited
	lines := make(chan string, 2)
	go func() {
		sc := bufio.NewScanner(stdoutR)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	fail := func(err error) (*runNS, error) {
		n.close()
		msg := strings.TrimSpace(string(holder.Stderr.(*Tail).Bytes()))
		if msg != "" {
			err = fmt.Errorf("%w: %s", err, msg)
		}
		return nil, fmt.Errorf("sandbox: the run's network namespace: %w", err)
	}
	if err := holderSays(lines, "ready"); err != nil {
		return fail(err)
	}
	pid := strconv.Itoa(holder.Process.Pid)
	if n.ns, err = os.Open("/proc/" + pid + "/ns/net"); err != nil {
		return fail(err)
	}
	userns, err := os.Open("/proc/" + pid + "/ns/user")
	if err != nil {
		return fail(err)
	}
	defer userns.Close()
	if err := n.startPasta(cfg.pasta, userns); err != nil {
		return fail(err)
	}
	host, err := hostAddrs()
	if err != nil {
		return fail(err)
	}
	var b strings.Builder
	plan := planRoutes(host, cfg.allow)
	for _, p := range plan.block {
		fmt.Fprintf(&b, "block %s\n", p)
	}
	for _, p := range plan.open {
		fmt.Fprintf(&b, "open %s\n", p)
	}
	b.WriteString("end\n")
	if _, err := io.WriteString(stdin, b.String()); err != nil {
		return fail(err)
	}
	if err := holderSays(lines, "ok"); err != nil {
		return fail(err)
	}
	n.enter = []string{cfg.nsenter, "--preserve-credentials", "-U", "-n", "-t", pid, "--"}
	return n, nil
}

// holderSays waits for the holder's next line, want.
func holderSays(lines <-chan string, want string) error {
	select {
	case l, ok := <-lines:
		if !ok {
			return errors.New("the holder exited")
		}
		if l != want {
			return errors.New(strings.TrimPrefix(l, "error: "))
		}
		return nil
	case <-time.After(pastaTimeout):
		return fmt.Errorf("the holder did not say %s in %s", want, pastaTimeout)
	}
}
