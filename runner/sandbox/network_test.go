package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/internal/testnet"
)

// The tests of sandbox.network public never send a packet off this
// machine: "the internet" is a network namespace the test makes
// (internal/testnet), joined to the host by a veth pair with
// documentation (TEST-NET-2) and private addresses, and every blocked
// destination is refused inside the run's namespace before pasta sees it
// (a node checks that its routes are there before it tries one).

// listen opens a listener of network ("tcp" or "udp") on addr inside the
// test internet (ns non-empty) or the host; a TCP one greets every
// connection with hello, a UDP one answers every datagram with it and
// sends what it got on got.
func listen(t *testing.T, ns, network, addr, hello string) (port int, got chan string) {
	t.Helper()
	got = make(chan string, 16)
	var ln net.Listener
	var pc net.PacketConn
	open := func() (err error) {
		if network == "udp" {
			pc, err = net.ListenPacket("udp", addr)
		} else {
			ln, err = net.Listen("tcp", addr)
		}
		return err
	}
	if ns == "" {
		if err := open(); err != nil {
			t.Fatal(err)
		}
	} else if err := testnet.InNamed(ns, open); err != nil {
		t.Fatal(err)
	}
	if pc != nil {
		t.Cleanup(func() { pc.Close() })
		go func() {
			buf := make([]byte, 512)
			for {
				n, from, err := pc.ReadFrom(buf)
				if err != nil {
					return
				}
				got <- string(buf[:n])
				pc.WriteTo([]byte(hello), from)
			}
		}()
		return pc.LocalAddr().(*net.UDPAddr).Port, got
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			got <- "connection"
			c.Write([]byte(hello))
			c.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port, got
}

// netSandbox is a Sandbox with the network mode n, its jails in one run.
func netSandbox(t *testing.T, cfg Config) *Jail {
	t.Helper()
	if cfg.Network == NetworkPublic {
		if _, err := findTool(cfg.Pasta, "pasta", HostEnv()["PATH"], ""); err != nil {
			t.Skip("no pasta here: " + PastaFix)
		}
	}
	s := newTestSandbox(t, cfg)
	return &Jail{Sandbox: s, Workspace: t.TempDir(), Run: t.Name()}
}

// python runs a python3 program in j and returns its output; it skips
// where the host has no /usr/bin/python3 for nodes to see.
func python(t *testing.T, j *Jail, program string, args ...string) string {
	t.Helper()
	if !executable("/usr/bin/python3") {
		t.Skip("no /usr/bin/python3")
	}
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := Run(ctx, Cmd{Argv: append([]string{"/usr/bin/python3", "-c", program}, args...), Dir: j.Workspace,
		Env: jailEnv(), Stdout: &out, Stderr: &out, Jail: j})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("python3 in the jail: %+v; output:\n%s", res, out.String())
	}
	return out.String()
}

// netProbe is a python3 program that tries each of its arguments,
// "tcp:ADDR:PORT", "udp:ADDR:PORT", "unix:@NAME", "dns:NAME" (resolved as
// every program does) or "resolv" (its name server) after the first, and
// prints one line for each: the reply, or the error; and first "ROUTES"
// if the run's namespace has its unreachable route for 10.0.0.0/8. With
// the first argument need-routes it tries nothing without that route:
// unblocked, some targets would leave the machine.
const netProbe = `
import socket, sys, time
routes = open("/proc/net/route").read().split("\n")[1:]
blocked = any(l.split()[1:2] == ["0000000A"] and int(l.split()[3], 16) & 0x200 for l in routes if l)
print("ROUTES" if blocked else "NOROUTES")
if sys.argv[1] == "need-routes" and not blocked:
    sys.exit(0)  # unblocked, some targets would leave the machine
for arg in sys.argv[2:]:
    kind, _, rest = arg.partition(":")
    start = time.monotonic()
    try:
        if kind == "resolv":
            got = [l for l in open("/etc/resolv.conf").read().split("\n") if l.startswith("nameserver")][0]
        elif kind == "dns":
            got = socket.gethostbyname(rest)
        elif kind == "unix":
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(5)
            s.connect("\0" + rest[1:])
            got = s.recv(100).decode()
        else:
            host, _, port = rest.rpartition(":")
            host = host.strip("[]")
            fam = socket.AF_INET6 if ":" in host else socket.AF_INET
            s = socket.socket(fam, socket.SOCK_DGRAM if kind == "udp" else socket.SOCK_STREAM)
            s.settimeout(5)
            s.connect((host, int(port)))
            if kind == "udp":
                s.send(b"ping")
            got = s.recv(100).decode()
        print(arg, "REPLY", got)
    except OSError as e:
        print(arg, "ERROR", e.__class__.__name__, e.strerror or e, "%.1fs" % (time.monotonic() - start))
`

// probeLines runs netProbe in j with targets and returns its lines by
// target. With wantRoutes the node tries nothing unless the run's
// namespace has its unreachable routes, and the test fails; only targets
// on this machine may be probed without.
func probeLines(t *testing.T, j *Jail, wantRoutes bool, targets ...string) map[string]string {
	t.Helper()
	mode := "any"
	if wantRoutes {
		mode = "need-routes"
	}
	out := python(t, j, netProbe, append([]string{mode}, targets...)...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if wantRoutes && lines[0] != "ROUTES" {
		t.Fatalf("the run's namespace has no unreachable route for 10.0.0.0/8; output:\n%s", out)
	}
	got := map[string]string{}
	for _, l := range lines[1:] {
		target, rest, _ := strings.Cut(l, " ")
		got[target] = rest
	}
	return got
}

// A node of a public run reaches a server of the (test) internet, TCP
// and UDP, through pasta.
func TestNetworkPublicReachesTheInternet(t *testing.T) {
	in := testnet.New(t)
	tcpPort, _ := listen(t, in.NS, "tcp", in.Public.String()+":0", "hello from the internet")
	udpPort, _ := listen(t, in.NS, "udp", in.Public.String()+":0", "udp hello")
	j := netSandbox(t, Config{Network: NetworkPublic})
	tcp := fmt.Sprintf("tcp:%s:%d", in.Public, tcpPort)
	udp := fmt.Sprintf("udp:%s:%d", in.Public, udpPort)
	got := probeLines(t, j, true, tcp, udp)
	for target, want := range map[string]string{tcp: "REPLY hello from the internet", udp: "REPLY udp hello"} {
		if got[target] != want {
			t.Errorf("%s: got %q, want %q", target, got[target], want)
		}
	}
}

// The attacks of a fork PR on the bot's host: its loopback services (TCP
// and UDP), an abstract Unix socket, its other addresses, and the
// sockets /proc/net lists. Each succeeds with network host, today's
// sharing, and fails with public and none.
func TestNetworkHostIsOutOfReach(t *testing.T) {
	tcpPort, tcpGot := listen(t, "", "tcp", "127.0.0.1:0", "postgres")
	anyPort, anyGot := listen(t, "", "tcp", "0.0.0.0:0", "any")
	udpPort, udpGot := listen(t, "", "udp", "127.0.0.1:0", "statsd")
	abstract := fmt.Sprintf("@kilroy-test-%d", os.Getpid())
	ul, err := net.Listen("unix", abstract)
	if err != nil {
		t.Fatal(err)
	}
	defer ul.Close()
	go func() {
		for {
			c, err := ul.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("abstract"))
			c.Close()
		}
	}()
	targets := []string{fmt.Sprintf("tcp:127.0.0.1:%d", tcpPort), fmt.Sprintf("udp:127.0.0.1:%d", udpPort), "unix:" + abstract}
	host, err := hostAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range host {
		if !a.IsLoopback() && !a.IsLinkLocalUnicast() {
			targets = append(targets, fmt.Sprintf("tcp:%s:%d", a, anyPort))
		}
	}
	hexPort := fmt.Sprintf(":%04X ", tcpPort)
	for _, network := range []Network{NetworkHost, NetworkPublic, NetworkNone} {
		t.Run(string(network), func(t *testing.T) {
			j := netSandbox(t, Config{Network: network})
			got := probeLines(t, j, network == NetworkPublic, targets...)
			for _, target := range targets {
				reached := strings.HasPrefix(got[target], "REPLY")
				if reached != (network == NetworkHost) {
					t.Errorf("%s: %q; want it reached only with network host", target, got[target])
				}
			}
			// What reached the host, whatever the node saw.
			for _, ch := range []chan string{tcpGot, udpGot, anyGot} {
				for len(ch) > 0 {
					if what := <-ch; network != NetworkHost {
						t.Errorf("the host's listener got a %s from the node", what)
					}
				}
			}
			var netFiles bytes.Buffer
			if _, err := Run(context.Background(), Cmd{Argv: []string{"cat", "/proc/net/tcp", "/proc/net/tcp6", "/proc/net/unix"},
				Env: jailEnv(), Stdout: &netFiles, Stderr: &netFiles, Jail: j}); err != nil {
				t.Fatal(err)
			}
			seen := strings.Contains(netFiles.String(), hexPort) || strings.Contains(netFiles.String(), abstract)
			if seen != (network == NetworkHost) {
				t.Errorf("/proc/net lists the host's sockets: %v; want that only with network host", seen)
			}
		})
	}
}

// Private, shared, link-local and metadata addresses fail at once inside
// the run's namespace (unreachable, not a timeout) unless
// sandbox.network_allow lists them; a listed range is reached.
func TestNetworkPublicBlocksPrivateRanges(t *testing.T) {
	in := testnet.New(t)
	port, _ := listen(t, in.NS, "tcp", in.Private.String()+":0", "hello from the company network")
	private := fmt.Sprintf("tcp:%s:%d", in.Private, port)
	blocked := []string{"tcp:169.254.169.254:80", "tcp:10.1.2.3:5432", "tcp:172.16.0.1:80", "tcp:192.168.1.1:80",
		"tcp:100.100.100.200:80", "udp:169.254.169.254:53", "tcp:[fd00:ec2::254]:80", "tcp:[fe80::1]:80", private}
	for _, a := range in.Host { // the host's own addresses, public or not
		blocked = append(blocked, fmt.Sprintf("tcp:%s:%d", a, port))
	}
	j := netSandbox(t, Config{Network: NetworkPublic})
	got := probeLines(t, j, true, blocked...)
	for _, target := range blocked {
		if g := got[target]; !strings.Contains(g, "No route to host") && !strings.Contains(g, "Invalid argument") ||
			!strings.HasSuffix(g, " 0.0s") {
			t.Errorf("%s: %q, want it unreachable at once", target, g)
		}
	}

	allow := netip.PrefixFrom(in.Private, 30).Masked()
	j = netSandbox(t, Config{Network: NetworkPublic, NetworkAllow: []netip.Prefix{allow}})
	got = probeLines(t, j, true, private, "tcp:10.1.2.3:5432")
	if want := "REPLY hello from the company network"; got[private] != want {
		t.Errorf("with network_allow %s: %s: %q, want %q", allow, private, got[private], want)
	}
	if g := got["tcp:10.1.2.3:5432"]; !strings.Contains(g, "No route to host") {
		t.Errorf("with network_allow %s: 10.1.2.3 %q, want it unreachable still", allow, g)
	}
}

// Network none has a loopback interface and nothing else; public has
// pasta's interface besides.
func TestNetworkInterfaces(t *testing.T) {
	for network, want := range map[Network]int{NetworkNone: 1, NetworkPublic: 2} {
		j := netSandbox(t, Config{Network: network})
		var out bytes.Buffer
		if _, err := Run(context.Background(), Cmd{Argv: []string{"cat", "/proc/net/dev"}, Env: jailEnv(),
			Stdout: &out, Stderr: &out, Jail: j}); err != nil {
			t.Fatal(err)
		}
		var ifs []string
		for _, l := range strings.Split(out.String(), "\n") {
			if name, _, ok := strings.Cut(l, ":"); ok && !strings.Contains(name, "|") {
				ifs = append(ifs, strings.TrimSpace(name))
			}
		}
		if len(ifs) != want || !slices.Contains(ifs, "lo") {
			t.Errorf("network %s: interfaces %q, want lo and %d in all", network, ifs, want)
		}
	}
}

// A pasta that cannot configure the namespace fails the self-test with an
// error ErrNetwork matches, and a missing one fails New so, naming the
// package to install.
func TestNetworkPublicWithoutPasta(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("network public needs root")
	}
	cfg := Config{Network: NetworkPublic, PATH: HostEnv()["PATH"], StateDir: t.TempDir(), Pasta: "/bin/false"}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.SelfTest(context.Background()); !errors.Is(err, ErrNetwork) {
		t.Errorf("self-test with a failing pasta: %v, want an error matching ErrNetwork", err)
	}
	cfg.Pasta, cfg.PATH = "", t.TempDir()
	if _, err := New(cfg); !errors.Is(err, ErrNetwork) || !strings.Contains(err.Error(), "apt-get install passt") {
		t.Errorf("New without pasta: %v, want an ErrNetwork naming passt", err)
	}
}
