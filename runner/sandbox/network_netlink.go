package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rtnl is a route netlink socket. A socket belongs to the network
// namespace it was made in, whichever thread uses it later: the run's
// namespace is configured through one made there (newRunNS).
type rtnl struct {
	fd  int
	seq uint32
}

func newRTNL() (*rtnl, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("netlink socket: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("netlink bind: %w", err)
	}
	return &rtnl{fd: fd}, nil
}

func (r *rtnl) close() { unix.Close(r.fd) }

// exchange sends one request and returns the payloads of its answer: the
// messages of a dump, or none for an acknowledged change. An error
// message from the kernel is returned as its errno.
func (r *rtnl) exchange(typ, flags uint16, body []byte) ([][]byte, error) {
	r.seq++
	msg := make([]byte, unix.SizeofNlMsghdr, unix.SizeofNlMsghdr+len(body))
	binary.NativeEndian.PutUint32(msg[0:], uint32(unix.SizeofNlMsghdr+len(body)))
	binary.NativeEndian.PutUint16(msg[4:], typ)
	binary.NativeEndian.PutUint16(msg[6:], flags|unix.NLM_F_REQUEST|unix.NLM_F_ACK)
	binary.NativeEndian.PutUint32(msg[8:], r.seq)
	msg = append(msg, body...)
	if err := unix.Sendto(r.fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, err
	}
	var out [][]byte
	buf := make([]byte, 64<<10)
	for {
		n, _, err := unix.Recvfrom(r.fd, buf, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			if m.Header.Seq != r.seq {
				continue
			}
			switch m.Header.Type {
			case unix.NLMSG_DONE:
				return out, nil
			case unix.NLMSG_ERROR:
				if len(m.Data) < 4 {
					return nil, errors.New("short netlink error")
				}
				if errno := -int32(binary.NativeEndian.Uint32(m.Data)); errno != 0 {
					return nil, syscall.Errno(errno)
				}
				return out, nil // the acknowledgement
			default:
				out = append(out, m.Data)
			}
		}
	}
}

// linkUp sets the interface of index up.
func (r *rtnl) linkUp(index int32) error {
	ifi := unix.IfInfomsg{Family: unix.AF_UNSPEC, Index: index, Flags: unix.IFF_UP, Change: unix.IFF_UP}
	body := (*[unix.SizeofIfInfomsg]byte)(unsafe.Pointer(&ifi))[:]
	_, err := r.exchange(unix.RTM_NEWLINK, 0, body)
	return err
}

// route is one route of the main table, as far as the namespace's set-up
// needs to know.
type route struct {
	dst   netip.Prefix
	gw    netip.Addr // invalid when none
	oif   uint32
	kind  uint8 // RTN_UNICAST, RTN_UNREACHABLE, ...
	table uint8 // 0 is the main table
}

// routes lists the main table's routes of family (AF_INET or AF_INET6).
func (r *rtnl) routes(family uint8) ([]route, error) {
	rtm := unix.RtMsg{Family: family}
	msgs, err := r.exchange(unix.RTM_GETROUTE, unix.NLM_F_DUMP, rtmBytes(&rtm))
	if err != nil {
		return nil, err
	}
	var out []route
	for _, m := range msgs {
		if len(m) < unix.SizeofRtMsg {
			continue
		}
		hdr := *(*unix.RtMsg)(unsafe.Pointer(&m[0]))
		if hdr.Table != unix.RT_TABLE_MAIN {
			continue
		}
		rt := route{kind: hdr.Type}
		var dst netip.Addr
		attrs, err := syscall.ParseNetlinkRouteAttr(&syscall.NetlinkMessage{
			Header: syscall.NlMsghdr{Type: unix.RTM_NEWROUTE}, Data: m})
		if err != nil {
			return nil, err
		}
		for _, a := range attrs {
			switch a.Attr.Type {
			case unix.RTA_DST:
				dst, _ = netip.AddrFromSlice(a.Value)
			case unix.RTA_GATEWAY:
				rt.gw, _ = netip.AddrFromSlice(a.Value)
			case unix.RTA_OIF:
				if len(a.Value) == 4 {
					rt.oif = binary.NativeEndian.Uint32(a.Value)
				}
			}
		}
		if !dst.IsValid() {
			dst = netip.IPv4Unspecified()
			if family == unix.AF_INET6 {
				dst = netip.IPv6Unspecified()
			}
		}
		rt.dst = netip.PrefixFrom(dst.Unmap(), int(hdr.Dst_len))
		out = append(out, rt)
	}
	return out, nil
}

// addRoute adds rt to the main table: an unreachable route (kind
// RTN_UNREACHABLE), or a unicast one through gw on oif.
func (r *rtnl) addRoute(rt route) error {
	return r.changeRoute(unix.RTM_NEWROUTE, unix.NLM_F_CREATE|unix.NLM_F_REPLACE, rt)
}

// delRoute removes rt from the main table.
func (r *rtnl) delRoute(rt route) error { return r.changeRoute(unix.RTM_DELROUTE, 0, rt) }

func (r *rtnl) changeRoute(typ, flags uint16, rt route) error {
	family := uint8(unix.AF_INET)
	if rt.dst.Addr().Is6() {
		family = unix.AF_INET6
	}
	table := rt.table
	if table == 0 {
		table = unix.RT_TABLE_MAIN
	}
	rtm := unix.RtMsg{Family: family, Dst_len: uint8(rt.dst.Bits()), Table: table,
		Protocol: unix.RTPROT_STATIC, Scope: unix.RT_SCOPE_UNIVERSE, Type: rt.kind}
	if typ == unix.RTM_DELROUTE {
		rtm.Protocol, rtm.Scope, rtm.Type = 0, unix.RT_SCOPE_NOWHERE, 0
	} else if rt.gw.IsValid() {
		// The gateway's subnet route is gone (applyRoutes): it is on the
		// link all the same, as pasta answers for every address there.
		rtm.Flags = unix.RTNH_F_ONLINK
	}
	body := rtmBytes(&rtm)
	if rt.dst.Bits() > 0 {
		body = appendAttr(body, unix.RTA_DST, rt.dst.Addr().AsSlice())
	}
	if rt.gw.IsValid() {
		body = appendAttr(body, unix.RTA_GATEWAY, rt.gw.AsSlice())
	}
	if rt.oif != 0 {
		body = appendAttr(body, unix.RTA_OIF, binary.NativeEndian.AppendUint32(nil, rt.oif))
	}
	if _, err := r.exchange(typ, flags, body); err != nil {
		return fmt.Errorf("route %s: %w", rt.dst, err)
	}
	return nil
}

// addPortRule adds a policy routing rule: packets of protocol proto
// (unix.IPPROTO_UDP, ...) to dst on port look their route up in table,
// before the main table (priority prio).
func (r *rtnl) addPortRule(dst netip.Prefix, proto uint8, port uint16, table uint8, prio uint32) error {
	family := uint8(unix.AF_INET)
	if dst.Addr().Is6() {
		family = unix.AF_INET6
	}
	// struct fib_rule_hdr: family, dst_len, src_len, tos, table, res1,
	// res2, action, flags.
	body := []byte{family, uint8(dst.Bits()), 0, 0, table, 0, 0, unix.FR_ACT_TO_TBL, 0, 0, 0, 0}
	body = appendAttr(body, unix.FRA_DST, dst.Addr().AsSlice())
	body = appendAttr(body, unix.FRA_PRIORITY, binary.NativeEndian.AppendUint32(nil, prio))
	body = appendAttr(body, unix.FRA_IP_PROTO, []byte{proto})
	ports := binary.NativeEndian.AppendUint16(binary.NativeEndian.AppendUint16(nil, port), port)
	body = appendAttr(body, unix.FRA_DPORT_RANGE, ports)
	if _, err := r.exchange(unix.RTM_NEWRULE, unix.NLM_F_CREATE|unix.NLM_F_EXCL, body); err != nil {
		return fmt.Errorf("rule to %s port %d: %w", dst, port, err)
	}
	return nil
}

func rtmBytes(m *unix.RtMsg) []byte {
	return append([]byte(nil), (*[unix.SizeofRtMsg]byte)(unsafe.Pointer(m))[:]...)
}

// appendAttr appends a route attribute, padded to four bytes.
func appendAttr(b []byte, typ uint16, val []byte) []byte {
	n := unix.SizeofRtAttr + len(val)
	b = binary.NativeEndian.AppendUint16(b, uint16(n))
	b = binary.NativeEndian.AppendUint16(b, typ)
	b = append(b, val...)
	for n%4 != 0 {
		b, n = append(b, 0), n+1
	}
	return b
}
