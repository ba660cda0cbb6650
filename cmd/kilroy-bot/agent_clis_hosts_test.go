package main

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/runner/agent/agenttest"
)

// TestRealCLIsReachOnlyTheModelServer runs each real CLI's happy path
// under strace and fails on any connection or DNS query other than the
// fake model server's: the switches the bot passes (cli_quiet.go) must
// keep a node's agent from phoning its vendor for telemetry, updates or
// plugins. Unjailed, so strace sees the CLI as the bot's own child.
func TestRealCLIsReachOnlyTheModelServer(t *testing.T) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace is not installed (scripts/install-sandbox.sh installs it): cannot watch the CLIs' connections")
	}
	if out, err := exec.Command(strace, "-f", "-qq", "-o", "/dev/null", "true").CombinedOutput(); err != nil {
		t.Skipf("strace cannot trace here (ptrace refused?): %v %s", err, out)
	}
	srv := agenttest.New(t, agenttest.Text("no case yet"))
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []cliUnderTest{claudeCLI, codexCLI, geminiCLI} {
		t.Run(c.cli, func(t *testing.T) {
			c.bin = agentCLIDir(t, c.program)
			trace := filepath.Join(t.TempDir(), "trace")
			c.bin = tracedProgram(t, strace, trace, c.bin)
			var happy cliCase
			for _, tc := range cliMatrix(c.shell) {
				if tc.name == "happy path" {
					happy = tc
				}
			}
			runCLICase(t, srv, c, happy)
			out, err := os.ReadFile(trace)
			if err != nil {
				t.Fatalf("no trace of the CLI: %v", err)
			}
			if stray := strayNetwork(string(out), u.Port()); len(stray) > 0 {
				t.Errorf("%s reached beyond the model server at %s:\n  %s", c.cli, srv.URL, strings.Join(stray, "\n  "))
			}
		})
	}
}

// tracedProgram writes a wrapper that runs bin under strace, recording
// every connect and sendto of it and its children in trace.
func tracedProgram(t *testing.T, strace, trace, bin string) string {
	t.Helper()
	w := filepath.Join(t.TempDir(), filepath.Base(bin))
	script := fmt.Sprintf("#!/bin/sh\nexec %q -f -qq -s 256 -e trace=connect,sendto -o %q %q \"$@\"\n", strace, trace, bin)
	if err := os.WriteFile(w, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return w
}

var (
	inetConnect = regexp.MustCompile(`connect\(\d+, \{sa_family=AF_INET6?, sin6?_port=htons\((\d+)\),.*?(?:inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6, "([^"]+)")`)
	dnsQuery    = regexp.MustCompile(`sendto\(\d+, "((?:[^"\\]|\\.)*)".*sin6?_port=htons\(53\)`)
)

// strayNetwork lists the connections in an strace log that are not to the
// model server on loopback port, and the names any DNS query asked for.
func strayNetwork(log, port string) []string {
	var stray []string
	for _, line := range strings.Split(log, "\n") {
		if m := dnsQuery.FindStringSubmatch(line); m != nil {
			stray = append(stray, "DNS query for "+dnsName(m[1]))
			continue
		}
		m := inetConnect.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		addr := m[2] + m[3]
		if (addr == "127.0.0.1" || addr == "::1") && m[1] == port {
			continue
		}
		stray = append(stray, "connect to "+addr+":"+m[1])
	}
	slices.Sort(stray)
	return slices.Compact(stray)
}

// dnsName reads the question name out of a DNS query as strace prints it
// (octal escapes for the label lengths).
func dnsName(q string) string {
	labels := regexp.MustCompile(`\\[0-7]{1,3}|\\[a-z]`).Split(q, -1)
	var name []string
	for _, l := range labels {
		if l != "" && regexp.MustCompile(`^[A-Za-z0-9-]+$`).MatchString(l) {
			name = append(name, l)
		}
	}
	return strings.Join(name, ".")
}
