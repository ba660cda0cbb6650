package sandbox

import (
	"fmt"
	"net"
	"net/netip"
	"slices"

	"golang.org/x/sys/unix"
)

// blockedPrefixes are the ranges no node reaches with network public,
// besides the host's own addresses: "this network", private (RFC 1918,
// unique local), shared address space (carrier-grade NAT, also used by
// overlay VPNs and one cloud's metadata), link-local (every cloud's
// metadata service: 169.254.169.254), IETF protocol assignments,
// benchmarking, multicast and reserved, and the NAT64 prefixes, which
// would translate back into any of those. Loopback needs no route: the
// namespace's 127.0.0.0/8 and ::1 are its own.
var blockedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("169.254.0.0/16"),
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.168.0.0/16"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("224.0.0.0/4"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("fc00::/7"),
	netip.MustParsePrefix("fe80::/10"),
}

// dnsForward is the name server of network public's jails (their
// /etc/resolv.conf names it): pasta (--dns-forward) sends the UDP queries
// a node sends it to the first name server of the host's
// /etc/resolv.conf, from the bot's own namespace, so that nodes resolve
// names as the host does even where its resolver is on a loopback or
// private address (systemd-resolved's 127.0.0.53, Docker's 127.0.0.11, a
// cloud's 10.x or 169.254.x resolver), which the namespace's routes
// block. The address is link-local, blocked like the rest of
// 169.254.0.0/16: one policy routing rule lets UDP to its port 53 alone
// through to pasta (dnsRule), so that nothing else sent to it reaches
// whatever has that address on the host's link. pasta of 2023 does not
// forward DNS over TCP, so a TCP query to it is refused at once, as is
// every other port and protocol.
var dnsForward = netip.MustParseAddr("169.254.1.1")

// The routing table and rule priority that let DNS queries to dnsForward
// through (dnsRule).
const (
	dnsTable    = 53
	dnsRulePrio = 100
)

// routePlan is what the run's namespace routes besides its default
// routes: unreachable ones for block, and ones through the default
// gateway for open, the operator's allowed ranges that a blocked prefix
// would otherwise shadow.
type routePlan struct {
	block, open []netip.Prefix
}

// planRoutes blocks blockedPrefixes but those an allowed prefix contains,
// and each of host, the host's own addresses, unless allow names that
// very address (a wider allowed range does not open the host itself).
func planRoutes(host []netip.Addr, allow []netip.Prefix) routePlan {
	var p routePlan
	for _, b := range blockedPrefixes {
		if !slices.ContainsFunc(allow, func(a netip.Prefix) bool { return a.Bits() <= b.Bits() && a.Contains(b.Addr()) }) {
			p.block = append(p.block, b)
		}
	}
	for _, a := range host {
		a = a.Unmap()
		if !a.IsValid() || a.IsLoopback() || a.IsUnspecified() {
			continue
		}
		self := netip.PrefixFrom(a, a.BitLen())
		if !slices.Contains(allow, self) && !slices.Contains(p.block, self) {
			p.block = append(p.block, self)
		}
	}
	for _, a := range allow {
		if slices.ContainsFunc(p.block, func(b netip.Prefix) bool { return b.Bits() < a.Bits() && b.Contains(a.Addr()) }) {
			p.open = append(p.open, a)
		}
	}
	return p
}

// hostAddrs are the addresses of the bot's own interfaces.
func hostAddrs() ([]netip.Addr, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("the host's addresses: %w", err)
	}
	var out []netip.Addr
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok {
				out = append(out, ip.Unmap())
			}
		}
	}
	return out, nil
}

// applyRoutes configures the namespace of r, as pasta left it: the
// default route of each family stays; every other route of the main
// table goes (the prefix routes of the addresses pasta copied from the
// host, which would lead to the host's own subnets), and plan's routes
// are added.
func applyRoutes(r *rtnl, plan routePlan) error {
	gws := map[bool]route{} // by Is6
	for _, family := range []uint8{unix.AF_INET, unix.AF_INET6} {
		rts, err := r.routes(family)
		if err != nil {
			return fmt.Errorf("list routes: %w", err)
		}
		for _, rt := range rts {
			if rt.dst.Bits() == 0 && rt.kind == unix.RTN_UNICAST {
				gws[family == unix.AF_INET6] = rt
				continue
			}
			if err := r.delRoute(rt); err != nil {
				return err
			}
		}
	}
	for _, b := range plan.block {
		if err := r.addRoute(route{dst: b, kind: unix.RTN_UNREACHABLE}); err != nil {
			return err
		}
	}
	if gw, ok := gws[false]; ok {
		if err := dnsRule(r, gw); err != nil {
			return err
		}
	}
	for _, a := range plan.open {
		gw, ok := gws[a.Addr().Is6()]
		if !ok {
			continue // no way out for that family at all
		}
		if err := r.addRoute(route{dst: a, gw: gw.gw, oif: gw.oif, kind: unix.RTN_UNICAST}); err != nil {
			return err
		}
	}
	return nil
}

// dnsRule routes UDP to dnsForward's port 53 through gw, pasta, in a
// table of its own that a rule consults for those packets only; every
// other packet to dnsForward meets the main table's unreachable route.
func dnsRule(r *rtnl, gw route) error {
	dst := netip.PrefixFrom(dnsForward, 32)
	if err := r.addRoute(route{dst: dst, gw: gw.gw, oif: gw.oif, kind: unix.RTN_UNICAST, table: dnsTable}); err != nil {
		return err
	}
	return r.addPortRule(dst, unix.IPPROTO_UDP, 53, dnsTable, dnsRulePrio)
}
