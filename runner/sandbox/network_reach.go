package sandbox

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// Unreached is why a node cannot reach an address: set by Reaches.
type Unreached struct {
	// Loopback: the address is the host's loopback (or localhost), which
	// a node's loopback is not; Own: it is one of the host's other
	// addresses. Either needs network host.
	Loopback, Own bool
	// Blocked is the blocked range the address is in; sandbox.network_allow
	// opens it.
	Blocked netip.Prefix
	// NoNetwork: network none gives nodes no network at all.
	NoNetwork bool
	Addr      netip.Addr // the address, when host was one
}

func (u Unreached) Error() string {
	switch {
	case u.NoNetwork:
		return "sandbox.network none gives nodes no network"
	case u.Loopback:
		return "it is a loopback address, and a node's loopback is its run's own network namespace, not this machine's"
	case u.Own:
		return fmt.Sprintf("%s is an address of this machine, which network public blocks", u.Addr)
	}
	return fmt.Sprintf("%s is in %s, which network public blocks", u.Addr, u.Blocked)
}

// Reaches says whether a node of network n, with the ranges allow opens,
// reaches host (an address, or a name: localhost and names under
// .localhost are loopback; other names are not resolved and pass). Only
// the sandbox's own rules are judged, not whether anything answers there.
func Reaches(n Network, allow []netip.Prefix, host string) (bool, Unreached) {
	n = n.orDefault()
	if n == NetworkHost {
		return true, Unreached{}
	}
	if n == NetworkNone {
		return false, Unreached{NoNetwork: true}
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return false, Unreached{Loopback: true}
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return true, Unreached{} // a name: not resolved here
	}
	a = a.Unmap().WithZone("")
	u := Unreached{Addr: a}
	if a.IsLoopback() {
		u.Loopback = true
		return false, u
	}
	if slices.ContainsFunc(allow, func(p netip.Prefix) bool { return p.Contains(a) }) {
		// planRoutes opens the host's own address only when allow names it
		// alone; a wider range leaves it blocked.
		if !slices.Contains(allow, netip.PrefixFrom(a, a.BitLen())) && isHostAddr(a) {
			u.Own = true
			return false, u
		}
		return true, Unreached{}
	}
	for _, p := range blockedPrefixes {
		if p.Contains(a) {
			u.Blocked = p
			return false, u
		}
	}
	if isHostAddr(a) {
		u.Own = true
		return false, u
	}
	return true, Unreached{}
}

// isHostAddr says whether a is one of the host's addresses.
func isHostAddr(a netip.Addr) bool {
	host, err := hostAddrs()
	return err == nil && slices.Contains(host, a)
}
