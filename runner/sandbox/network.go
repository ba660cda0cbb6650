package sandbox

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
)

// Network is what a jail's network namespace reaches (sandbox.network in
// the server policy).
//
// Public (the default): every run has a network namespace of its own,
// shared by the run's nodes, whose only way out is pasta (Debian's
// passt), a user-space TCP/IP stack that turns the namespace's packets
// into the bot's own sockets. Inside the namespace, before any node runs,
// routes of type unreachable cover the host's own addresses and every
// private, shared, link-local (so cloud metadata) and reserved range
// (blockedPrefixes) but the operator's NetworkAllow; the host's loopback
// is not the namespace's, and pasta is told to forward no port in either
// direction and not to map its gateway to the host. A new namespace also
// has its own abstract Unix sockets and its own /proc/net.
//
// None: every jail gets a namespace of its own with only a loopback
// interface (bwrap --unshare-net).
//
// Host: jails share the bot's network namespace: the host's loopback
// services, its abstract Unix sockets and its private networks are all
// reachable. Insecure; for operators who accept that.
type Network string

const (
	NetworkPublic Network = "public"
	NetworkNone   Network = "none"
	NetworkHost   Network = "host"
)

// ParseNetwork reads a sandbox.network value: public, none or host, and
// the booleans of older configs (true is public, false none).
func ParseNetwork(v string) (Network, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "public", "true":
		return NetworkPublic, nil
	case "none", "false":
		return NetworkNone, nil
	case "host":
		return NetworkHost, nil
	}
	return "", fmt.Errorf("%q is not a network mode: write public, none or host", v)
}

// orDefault is n, or NetworkPublic for the zero value.
func (n Network) orDefault() Network {
	if n == "" {
		return NetworkPublic
	}
	return n
}

// Network reports what nodes' network namespaces reach.
func (s *Sandbox) Network() Network { return s.network }

// netArgs are bwrap's network options: a namespace of the jail's own for
// none; none for public, whose jails start inside their run's namespace
// (netLease.start), nor for host.
func (s *Sandbox) netArgs() []string {
	if s.network == NetworkNone {
		return []string{"--unshare-net"}
	}
	return nil
}

// ParseCIDRs reads sandbox.network_allow: CIDRs such as 10.1.2.0/24 or
// fd12::/64; a bare address is its own /32 or /128.
func ParseCIDRs(list []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(list))
	for _, v := range list {
		v = strings.TrimSpace(v)
		p, err := netip.ParsePrefix(v)
		if err != nil {
			a, aerr := netip.ParseAddr(v)
			if aerr != nil {
				return nil, fmt.Errorf("%q is not a CIDR such as 10.1.2.0/24 or fd12::/64", v)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// runOf names the run of a node's jail (Jail.Run) after the run's managed
// roots directory, which is the run's own (NodeJail's callers pass the
// run's), or else its workspace.
func runOf(workspace, managedRoots string) string {
	if managedRoots != "" {
		return managedRoots
	}
	return workspace
}

// ErrNetwork matches the errors of network public's set-up (no pasta, no
// nsenter or user namespaces for a bot that is not root, a namespace pasta
// could not configure), so that a caller can fall back to another mode
// (kilroy-bot run does) or say which setting fixes it.
var ErrNetwork = errors.New("sandbox: network public is unavailable")

// netError is an error of network public's set-up; its message is err's.
type netError struct{ err error }

func (e *netError) Error() string        { return e.err.Error() }
func (e *netError) Unwrap() error        { return e.err }
func (e *netError) Is(target error) bool { return target == ErrNetwork }

func networkError(err error) error {
	if err == nil {
		return nil
	}
	return &netError{err}
}

// checkNetns checks a self-test jail's network namespace, link being its
// /proc/self/ns/net: the bot's own only with network host.
func (s *Sandbox) checkNetns(link string) error {
	runtime.LockOSThread() // a thread of the bot's namespace, not one in do
	own, err := os.Readlink("/proc/thread-self/ns/net")
	runtime.UnlockOSThread()
	if err != nil {
		return fmt.Errorf("sandbox self-test: %w", err)
	}
	if shared := link == own; shared != (s.network == NetworkHost) {
		return networkError(fmt.Errorf("sandbox self-test: the jail's network namespace is %q, the bot's %q, with network %s",
			link, own, s.network))
	}
	return nil
}

// publicResolv is the resolv.conf of network public's jails: dnsForward
// is their only name server.
func publicResolv() []byte {
	return []byte("# kilroy-bot: pasta forwards these queries to the host's name server\nnameserver " + dnsForward.String() + "\n")
}

// writeResolv writes publicResolv into stateDir and returns its path. A
// jail on an image root binds it over the image's /etc/resolv.conf; the
// host's /etc view holds it already (etcView).
func writeResolv(stateDir string) (string, error) {
	p := filepath.Join(stateDir, "resolv-public.conf")
	if err := safefile.WriteFile(p, publicResolv()); err != nil {
		return "", fmt.Errorf("sandbox: %w", err)
	}
	return p, nil
}
