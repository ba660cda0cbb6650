// Package testnet makes the "internet" of network tests: a network
// namespace the test makes for itself, joined to the host by a veth pair,
// with a public-looking documentation address (TEST-NET-2, which no
// sandbox route blocks) and a private one (which network public blocks
// unless sandbox.network_allow lists it). A server listening there is
// reached from a jail of network public through pasta, as a server on the
// internet would be, and no packet leaves the machine. Only tests import
// it.
package testnet

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// Internet is a test-made network namespace standing for the public
// internet, reachable from the host through a veth pair.
type Internet struct {
	NS      string       // its name under /run/netns
	Public  netip.Addr   // its public-looking address (in 198.51.100.0/24)
	Private netip.Addr   // its private address (in 10.214.0.0/16)
	Host    []netip.Addr // the host's ends of the pair, public and private
}

// slots is how many internets may exist at once on one machine: one /30
// of TEST-NET-2 each.
const slots = 64

// lockDir holds one lock file per slot: a test process holds its slot's
// lock while its internet lives, so tests of several packages (processes)
// running at once take distinct subnets, and a slot whose process died
// (its cleanup never ran) is taken over and cleaned.
const lockDir = "/run/kilroy-testnet"

// Make makes an internet for t, removed when t ends, or says why it
// cannot here (not root, no CAP_NET_ADMIN, no ip from iproute2).
func Make(t testing.TB) (*Internet, error) {
	t.Helper()
	if os.Geteuid() != 0 {
		return nil, errors.New("making a test network namespace needs root (CAP_NET_ADMIN)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, errors.New("no ip (iproute2) to make a test network namespace")
	}
	if err := os.MkdirAll(lockDir, 0o700); err != nil {
		return nil, err
	}
	start := os.Getpid() % slots
	for i := range slots {
		n := (start + i) % slots
		lock, err := os.OpenFile(filepath.Join(lockDir, fmt.Sprint(n)), os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			return nil, err
		}
		if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			lock.Close()
			continue // another test's
		}
		in, err := makeSlot(t, n)
		if err != nil {
			lock.Close()
			return nil, err
		}
		t.Cleanup(func() { lock.Close() }) // after the namespace is gone (cleanups run last first)
		return in, nil
	}
	return nil, fmt.Errorf("all %d test network slots are taken", slots)
}

// New is Make, skipping the test where it cannot make one.
func New(t testing.TB) *Internet {
	t.Helper()
	in, err := Make(t)
	if err != nil {
		t.Skip(err)
	}
	return in
}

// makeSlot makes the internet of slot n, first removing what a test that
// died holding n left.
func makeSlot(t testing.TB, n int) (*Internet, error) {
	in := &Internet{
		NS:      fmt.Sprintf("kilroy-testnet-%d", n),
		Public:  netip.AddrFrom4([4]byte{198, 51, 100, byte(4*n + 2)}),
		Private: netip.AddrFrom4([4]byte{10, 214, byte(n), 2}),
		Host:    []netip.Addr{netip.AddrFrom4([4]byte{198, 51, 100, byte(4*n + 1)}), netip.AddrFrom4([4]byte{10, 214, byte(n), 1})},
	}
	hostIf, nsIf := fmt.Sprintf("ktn%dh", n), fmt.Sprintf("ktn%dn", n)
	exec.Command("ip", "netns", "del", in.NS).Run()
	exec.Command("ip", "link", "del", hostIf).Run()
	if err := ip("netns", "add", in.NS); err != nil {
		return nil, err
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", in.NS).Run() })
	if err := ip("link", "add", hostIf, "type", "veth", "peer", "name", nsIf, "netns", in.NS); err != nil {
		return nil, err
	}
	t.Cleanup(func() { exec.Command("ip", "link", "del", hostIf).Run() })
	for _, args := range [][]string{
		{"addr", "add", in.Host[0].String() + "/30", "dev", hostIf},
		{"addr", "add", in.Host[1].String() + "/30", "dev", hostIf},
		{"link", "set", hostIf, "up"},
		{"-n", in.NS, "addr", "add", in.Public.String() + "/30", "dev", nsIf},
		{"-n", in.NS, "addr", "add", in.Private.String() + "/30", "dev", nsIf},
		{"-n", in.NS, "link", "set", nsIf, "up"},
		{"-n", in.NS, "link", "set", "lo", "up"},
	} {
		if err := ip(args...); err != nil {
			return nil, err
		}
	}
	return in, nil
}

func ip(args ...string) error {
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Do runs f on a thread inside the internet: the sockets f makes are the
// internet's, and stay so wherever they are used.
func (in *Internet) Do(f func() error) error { return InNamed(in.NS, f) }

// Listen listens on the internet's public address; port 0 picks one.
func (in *Internet) Listen(port int) (net.Listener, error) {
	var ln net.Listener
	err := in.Do(func() (err error) {
		ln, err = net.Listen("tcp4", netip.AddrPortFrom(in.Public, uint16(port)).String())
		return err
	})
	return ln, err
}

// InNamed runs f on a thread inside the network namespace
// /run/netns/name, or in this process's own one for name "".
func InNamed(name string, f func() error) error {
	if name == "" {
		return f()
	}
	target, err := os.Open("/run/netns/" + name)
	if err != nil {
		return err
	}
	defer target.Close()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		self, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer self.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		err = f()
		// A thread that cannot go back ends with this goroutine, still
		// locked.
		if unix.Setns(int(self.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		errc <- err
	}()
	return <-errc
}
