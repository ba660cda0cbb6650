package main

import (
	"fmt"
	"net"
	"net/url"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
)

// netAttackScript is a fork PR's node that goes for the host's loopback:
// a Postgres-like listener (the queue with trust auth) and the bot's own
// /metrics. It records what it reached in loot/net.txt, which the run
// branch carries.
func netAttackScript(pgPort, botPort string) string {
	return fmt.Sprintf(`#!/bin/bash
mkdir -p loot
if exec 3<>/dev/tcp/127.0.0.1/%[1]s; then head -c 100 <&3 > loot/pg.txt; echo "pg REACHED" >> loot/net.txt; else echo "pg BLOCKED" >> loot/net.txt; fi
if exec 4<>/dev/tcp/127.0.0.1/%[2]s; then printf 'GET /metrics HTTP/1.0\r\n\r\n' >&4; head -c 100 <&4 > loot/metrics.txt; echo "metrics REACHED" >> loot/net.txt; else echo "metrics BLOCKED" >> loot/net.txt; fi
exit 0
`, pgPort, botPort)
}

const netAttackDOT = `digraph ci {
  start [shape=Mdiamond]
  attack [shape=parallelogram, tool_command="bash ./attack.sh"]
  done [shape=Msquare]
  start -> attack -> done
}
`

// TestServeE2ENetworkAttack: a fork PR, approved with /kilroy run, whose
// node reaches for a Postgres-like listener and the bot's /metrics on
// the host's loopback, reaches neither with sandbox.network public (the
// default); with host, today's sharing, it reaches both and every summary
// says nodes share the host's network.
func TestServeE2ENetworkAttack(t *testing.T) {
	needSandbox(t)
	if _, err := exec.LookPath("pasta"); err != nil {
		t.Skip("no pasta (passt) here")
	}
	for _, network := range []string{"public", "host"} {
		t.Run(network, func(t *testing.T) { testNetworkAttack(t, network) })
	}
}

func testNetworkAttack(t *testing.T, network string) {
	pg, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	var reached atomic.Int32
	go func() {
		for {
			c, err := pg.Accept()
			if err != nil {
				return
			}
			reached.Add(1)
			c.Write([]byte("R\x00\x00\x00\x08\x00\x00\x00\x00")) // AuthenticationOk: trust
			c.Close()
		}
	}()
	_, pgPort, _ := net.SplitHostPort(pg.Addr().String())
	e := newE2E(t, e2eOptions{policy: "sandbox:\n  network: " + network + "\n",
		files: map[string]string{"main.go": mainGo, ".kilroy/ci.dot": netAttackDOT, "attack.sh": "exit 0\n"}})
	u, err := url.Parse(e.base)
	if err != nil {
		t.Fatal(err)
	}
	mallory := e.gh.AddRepo("mallory", e2eName)
	sha := mallory.Commit(t, "main", map[string]string{"main.go": mainGo, ".kilroy/ci.dot": netAttackDOT,
		"attack.sh": netAttackScript(pgPort, u.Port())}, "innocent change")
	e.deliver("pull_request", e.openPR("opened", pr{number: 41, sha: sha, author: "mallory", fork: "mallory/widgets",
		files: []string{"attack.sh"}}))
	e.waitSettled(sha, "kilroy/ci")
	e.deliver("issue_comment", e.comment(41, "carol", "/kilroy run"))
	e.waitFor("the approved run to complete", func() bool {
		return len(e.named(sha, "kilroy/ci")) == 2 && allCompleted(e.checkRuns(sha))
	})
	e.waitIdle()
	sum := e.newestSummary(sha)
	if row := nodeRow(sum.Summary, "attack"); len(row) < 3 || !strings.Contains(row[2], "success") {
		t.Fatalf("the attack node did not run to its end (row %q):\n%s", row, sum.Summary)
	}
	got := strings.TrimSpace(e.repo.Git(t, "show", "kilroy/run/ci/"+runID(sum)+":loot/net.txt"))
	want, wantConns := "pg BLOCKED\nmetrics BLOCKED", int32(0)
	if network == "host" {
		want, wantConns = "pg REACHED\nmetrics REACHED", 1
	}
	if got != want || reached.Load() != wantConns {
		t.Errorf("network %s: the node recorded %q and the listener had %d connections; want %q and %d",
			network, got, reached.Load(), want, wantConns)
	}
	if banner := strings.Contains(sum.Summary, "host's network"); banner != (network == "host") {
		t.Errorf("network %s: the summary warns of the host's network: %v\n%s", network, banner, sum.Summary)
	}
}
