//go:build unix

package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/queue/pgtest"
)

// replicaDOT: each of one and two appends a line no other execution of
// it could write (the time in nanoseconds) to trail.txt, which every
// checkpoint commits; mid waits for gate, then appends its own line.
func replicaDOT(gate string) string {
	return fmt.Sprintf(`digraph ci {
  start [shape=Mdiamond]
  one [shape=parallelogram, tool_command="echo one $(date +%%s%%N) >> trail.txt"]
  two [shape=parallelogram, tool_command="echo two $(date +%%s%%N) >> trail.txt"]
  mid [shape=octagon, command=%q]
  done [shape=Msquare]
  start -> one -> two -> mid -> done
}
`, fmt.Sprintf(`while [ ! -e %s ]; do sleep 0.05; done; echo mid >> trail.txt`, gate))
}

// TestServeE2EReplicaTakesOver: two replicas of serve share one Postgres.
// Replica A, a process of its own, runs a pipeline and is killed with
// SIGKILL while node mid runs; replica B, which never saw the run's
// directory, takes the run over once A's heartbeat is stale, rebuilds the
// run directory from the database and the run branch on the remote, and
// resumes at mid: one and two do not run again (their lines in trail.txt
// are those A committed), and every check completes.
func TestServeE2EReplicaTakesOver(t *testing.T) {
	pg := pgtest.Start(t)
	gate := newGate(t)
	e := newE2E(t, e2eOptions{files: map[string]string{"main.go": mainGo, ".kilroy/ci.dot": replicaDOT(gate)},
		databaseURL: pg, staleAfter: 2 * time.Second, deferStart: true})
	a, sha, id := runOnReplica(t, e, pg, 31, "two", "mid")
	branch := "kilroy/run/ci/" + id
	before := e.repo.Git(t, "rev-parse", branch)
	trailBefore := e.repo.Git(t, "show", before+":trail.txt")

	a.kill(t)
	touch(t, gate)
	e.start()
	e.waitSettled(sha, "kilroy/ci", "kilroy/ci/mid")
	// Not waitIdle: the tokens A minted stay unrevoked, A being dead.
	e.waitFor("no run queued or running", func() bool {
		code, metrics := e.get("/metrics")
		return code == http.StatusOK && strings.Contains(metrics, "\nkilroy_queue_depth 0\n")
	})

	log := e.repo.Git(t, "log", "--format=%s", sha+".."+branch)
	for _, node := range []string{"start", "one", "two", "mid", "done"} {
		n := 0
		for _, subject := range strings.Split(log, "\n") {
			if strings.Contains(subject, "): "+node+" (") {
				n++
			}
		}
		if n != 1 {
			t.Errorf("node %s has %d checkpoints on %s, want 1:\n%s", node, n, branch, log)
		}
	}
	if out, err := exec.Command("git", "--git-dir", e.repo.Dir, "merge-base", "--is-ancestor", before, branch).CombinedOutput(); err != nil {
		t.Errorf("A's last checkpoint %s is not in the resumed branch: %v %s", before, err, out)
	}
	if got, want := e.repo.Git(t, "show", branch+":trail.txt"), strings.TrimRight(trailBefore, "\n")+"\nmid"; strings.TrimRight(got, "\n") != want {
		t.Errorf("trail.txt after the takeover:\n%s\nwant A's lines of one and two, then mid:\n%s", got, want)
	}
	if !strings.Contains(e.logs.String(), "rebuilt the run directory") {
		t.Errorf("replica B did not rebuild the run directory; its log:\n%s", e.logs.String())
	}
	e.assertAllCompleted()
}

// runOnReplica starts replica A on the fake GitHub of e and the shared
// database pg, delivers pull request number (a new head on
// feature-<number>) to it, and waits until A's run of kilroy/ci has
// started node and the checkpoint of last, the node before it, is on the
// remote (checkpoints are pushed in the background), so that a replica
// taking the run over has it. It returns A, the head SHA and the run id.
func runOnReplica(t *testing.T, e *e2e, pg string, number int, last, node string) (a *replica, sha, id string) {
	t.Helper()
	a = startReplica(t, e, pg)
	sha = e.repo.Commit(t, fmt.Sprintf("feature-%d", number), map[string]string{"README.md": "change\n"}, "change")
	a.deliver(t, e, "pull_request", e.openPR("opened", pr{number: number, sha: sha}))
	e.waitFor("replica A to run node "+node, func() bool {
		runs := e.named(sha, "kilroy/ci")
		if len(runs) == 0 {
			return false
		}
		id = runID(runs[len(runs)-1])
		_, err := os.Stat(filepath.Join(a.dataDir, "runs", id, "nodes", node))
		return err == nil
	})
	branch := "kilroy/run/ci/" + id
	e.waitFor("the checkpoint of "+last+" on the remote", func() bool {
		out, err := exec.Command("git", "--git-dir", e.repo.Dir, "log", "-1", "--format=%s", branch).Output()
		return err == nil && strings.Contains(string(out), last+" (success)")
	})
	return a, sha, id
}

// replica is a serve process of its own sharing the test's database.
type replica struct {
	cmd     *exec.Cmd
	base    string
	dataDir string
	out     *syncBuffer
}

// startReplica starts serve as a process on the fake GitHub of e with the
// shared database pg and a data dir of its own, and waits for /healthz.
func startReplica(t *testing.T, e *e2e, pg string) *replica {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	r := &replica{base: "http://" + addr, dataDir: filepath.Join(t.TempDir(), "data"), out: &syncBuffer{}}
	args := []string{"serve", "--listen", addr, "--data-dir", r.dataDir, "--github-url", e.gh.APIURL(),
		"--public-url", publicURL, "--workers", "2", "--config", e.cfg.ConfigFile, "--database-url", pg}
	if e.cfg.InsecureNoSandbox {
		args = append(args, "--insecure-no-sandbox")
	}
	r.cmd = exec.Command(os.Args[0], args...)
	r.cmd.Env = append(os.Environ(), beKilroyBot+"=1", fmt.Sprintf("KILROY_APP_ID=%d", e.gh.AppID()),
		"KILROY_PRIVATE_KEY_FILE="+e.gh.PrivateKeyFile(t), "KILROY_WEBHOOK_SECRET="+string(e.secret),
		"KILROY_ALLOW_ROOT=1") // the tests may run as root
	r.cmd.Stdout, r.cmd.Stderr = r.out, r.out
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.kill(t) })
	e.waitFor("replica A to answer /healthz", func() bool {
		resp, err := http.Get(r.base + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return r
}

func (r *replica) deliver(t *testing.T, e *e2e, event string, body []byte) {
	t.Helper()
	id := fmt.Sprintf("%s-a-%d", t.Name(), e.ids.Add(1))
	if code, resp := e.do(e.gh.Hook(e.secret).Request(t, r.base+"/webhooks/github", event, id, body)); code != http.StatusAccepted {
		t.Fatalf("delivery to replica A = %d %s, want 202\nA's log:\n%s", code, resp, r.out.String())
	}
}

// kill ends the replica with SIGKILL and waits for it; it may be called
// more than once.
func (r *replica) kill(t *testing.T) {
	t.Helper()
	if r.cmd.ProcessState != nil {
		return
	}
	_ = r.cmd.Process.Kill()
	ctx, cancel := context.WithTimeout(context.Background(), e2eWait)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- r.cmd.Wait() }()
	select {
	case <-done:
	case <-ctx.Done():
		t.Errorf("replica A did not exit after SIGKILL")
	}
}
