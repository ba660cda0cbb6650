package sandbox

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/internal/testnet"
)

// dnsServer answers A queries for name with addr and every other query
// with NXDOMAIN, over UDP on listen; it sends each name asked on got.
func dnsServer(t *testing.T, listen, name string, addr netip.Addr) (got chan string) {
	t.Helper()
	pc, err := net.ListenPacket("udp", listen)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	got = make(chan string, 16)
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if resp, asked, ok := dnsAnswer(buf[:n], name, addr); ok {
				select {
				case got <- asked:
				default:
				}
				pc.WriteTo(resp, from)
			}
		}
	}()
	return got
}

// dnsAnswer builds the answer to query q: one question, an A record for
// name or else NXDOMAIN (and no record for other types of name).
func dnsAnswer(q []byte, name string, addr netip.Addr) (resp []byte, asked string, ok bool) {
	if len(q) < 12 || binary.BigEndian.Uint16(q[4:]) != 1 {
		return nil, "", false
	}
	var labels []string
	i := 12
	for i < len(q) && q[i] != 0 {
		l := int(q[i])
		if l > 63 || i+1+l > len(q) {
			return nil, "", false
		}
		labels = append(labels, string(q[i+1:i+1+l]))
		i += 1 + l
	}
	if i+5 > len(q) {
		return nil, "", false
	}
	asked = strings.ToLower(strings.Join(labels, "."))
	qtype := binary.BigEndian.Uint16(q[i+1:])
	resp = append([]byte(nil), q[:i+5]...)
	resp[2] = 0x84 | q[2]&0x01 // a response, authoritative, recursion desired as asked
	resp[3] = 0x80             // recursion available, no error
	binary.BigEndian.PutUint16(resp[6:], 0)
	binary.BigEndian.PutUint16(resp[8:], 0)
	binary.BigEndian.PutUint16(resp[10:], 0)
	switch {
	case asked != name:
		resp[3] |= 3 // NXDOMAIN
	case qtype == 1:
		binary.BigEndian.PutUint16(resp[6:], 1)
		a := addr.As4()
		resp = append(resp, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, a[0], a[1], a[2], a[3])
	}
	return resp, asked, true
}

// pastaWithResolver is a pasta that reads resolv as the host's
// /etc/resolv.conf (the name server it forwards dnsForward's queries
// to): a script that starts the host's pasta in a mount namespace of its
// own with resolv bound there.
func pastaWithResolver(t *testing.T, resolv string) string {
	t.Helper()
	pasta, err := findTool("", "pasta", HostEnv()["PATH"], "")
	if err != nil {
		t.Skip("no pasta here: " + PastaFix)
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare (util-linux)")
	}
	script := filepath.Join(t.TempDir(), "pasta")
	body := fmt.Sprintf("#!/bin/sh\nexec %s -m --propagation private sh -c 'mount --bind \"$0\" /etc/resolv.conf && exec \"$@\"' %s %s \"$@\"\n",
		unshare, resolv, pasta)
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

// A node of a public run resolves names through the host's name server,
// here one on a loopback address of the host, as systemd-resolved's and
// Docker's are; the name server's address lets UDP to port 53 through
// and nothing else, and private addresses stay out of reach.
func TestNetworkPublicResolvesNames(t *testing.T) {
	in := testnet.New(t) // also skips unless root
	n := os.Getpid() % 250
	resolver := netip.AddrFrom4([4]byte{127, 213, byte(n), 53})
	const name = "pkg.kilroy-test.example"
	answer := netip.AddrFrom4([4]byte{203, 0, 113, 77})
	got := dnsServer(t, resolver.String()+":53", name, answer)
	resolv := filepath.Join(t.TempDir(), "resolv.conf")
	if err := os.WriteFile(resolv, []byte("nameserver "+resolver.String()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	j := netSandbox(t, Config{Network: NetworkPublic, Pasta: pastaWithResolver(t, resolv)})

	fwd := dnsForward.String()
	dns := "dns:" + name
	unreachable := []string{"tcp:" + fwd + ":53", "udp:" + fwd + ":54", "tcp:" + fwd + ":80",
		"udp:169.254.169.254:53", "udp:10.1.2.3:53", fmt.Sprintf("tcp:%s:80", in.Private)}
	lines := probeLines(t, j, true, append([]string{"resolv", dns, "dns:nx.kilroy-test.example"}, unreachable...)...)
	if want := "REPLY nameserver " + fwd; lines["resolv"] != want {
		t.Errorf("the node's /etc/resolv.conf: %q, want %q", lines["resolv"], want)
	}
	if want := "REPLY " + answer.String(); lines[dns] != want {
		t.Errorf("%s: %q, want %q", name, lines[dns], want)
	}
	if g := lines["dns:nx.kilroy-test.example"]; !strings.HasPrefix(g, "ERROR") {
		t.Errorf("a name the server does not know: %q, want an error", g)
	}
	select {
	case asked := <-got:
		if asked != name && asked != "nx.kilroy-test.example" {
			t.Errorf("the host's name server was asked %q", asked)
		}
	default:
		t.Error("the host's name server was asked nothing")
	}
	for _, target := range unreachable {
		if g := lines[target]; !strings.Contains(g, "No route to host") || !strings.HasSuffix(g, " 0.0s") {
			t.Errorf("%s: %q, want it unreachable at once", target, g)
		}
	}
}
