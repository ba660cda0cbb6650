package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// holdDOT is a pipeline whose tool node sleeps for ten minutes under the
// name token (exec -a), so the test finds its process from the host and
// can tell whether cancelling the run killed it. The vet node after it
// never starts; its check must still complete.
func holdDOT(token string) string {
	return fmt.Sprintf(`digraph ci {
  start [shape=Mdiamond]
  hold [shape=parallelogram, tool_command=%q]
  vet [shape=octagon, command="true"]
  done [shape=Msquare]
  start -> hold -> vet -> done
}
`, fmt.Sprintf("exec -a %s sleep 600", token))
}

// TestServeE2EPullRequestClosed: closing a pull request while its run sits
// in a node cancels the run as `/kilroy cancel` would: the node's process
// is killed, every check of the run completes cancelled saying the pull
// request was closed, and nothing is posted on the pull request. Reopened,
// the pull request runs again, and merging it cancels that run the same
// way, saying it was merged.
func TestServeE2EPullRequestClosed(t *testing.T) {
	pids := fmt.Sprintf("kilroy-hold-%d-%d", os.Getpid(), time.Now().UnixNano())
	e := newE2E(t, e2eOptions{files: map[string]string{"main.go": mainGo, ".kilroy/ci.dot": holdDOT(pids)}})
	sha := e.repo.Commit(t, "feature-21", map[string]string{"README.md": "change\n"}, "change")
	e.deliver("pull_request", e.openPR("opened", pr{number: 21, sha: sha}))
	first := e.waitHolding(sha, pids, 1)

	// The shared pull_request/closed payload (merged: false), edited by
	// openPR for octo/widgets, pull request 21 and its head.
	e.deliver("pull_request", e.openPR("closed", pr{number: 21, sha: sha}))
	e.assertRunCancelled(sha, first.run, "pull request closed")
	e.waitIdle()
	assertProcessGone(t, first.pid)

	// The shared reopened payload, edited the same way, runs the head
	// again; the closed payload with merged set to true cancels that run.
	e.deliver("pull_request", e.openPR("reopened", pr{number: 21, sha: sha}))
	second := e.waitHolding(sha, pids, 2)
	if second.run == first.run {
		t.Fatalf("reopening did not start a new run: still %s", first.run)
	}
	merged := e.openPR("closed", pr{number: 21, sha: sha})
	merged = e.editJSON(merged, func(o jsonObject) { o.obj("pull_request").set("merged", true) })
	e.deliver("pull_request", merged)
	e.assertRunCancelled(sha, second.run, "pull request merged")
	e.waitIdle()
	assertProcessGone(t, second.pid)

	if got := e.botComments(); len(got) != 0 {
		t.Errorf("closing the pull request posted comments: %q", got)
	}
	e.assertAllCompleted()
}

// holding is a run of the hold pipeline sitting in its hold node.
type holding struct {
	run string
	pid int
}

// waitHolding waits until the n-th run of kilroy/ci on sha is in its hold
// node and that node's process, named token, runs (the processes of
// earlier runs are gone by then).
func (e *e2e) waitHolding(sha, token string, n int) holding {
	e.t.Helper()
	var h holding
	e.waitFor(fmt.Sprintf("run %d of kilroy/ci on %.7s to hold with its process id written", n, sha), func() bool {
		if runs := e.named(sha, "kilroy/ci"); len(runs) == n {
			h.run = runID(runs[n-1])
		} else {
			return false
		}
		if _, err := os.Stat(e.cfg.DataDir + "/runs/" + h.run + "/nodes/hold"); err != nil {
			return false
		}
		pids := processesNamed(token)
		if len(pids) != 1 {
			return false
		}
		h.pid = pids[0]
		return true
	})
	return h
}

// assertRunCancelled waits for every check of run on sha to complete and
// wants each cancelled with output that mentions reason.
func (e *e2e) assertRunCancelled(sha, run, reason string) {
	e.t.Helper()
	e.waitSettled(sha, "kilroy/ci", "kilroy/ci/vet")
	var names []string
	for _, r := range e.checkRuns(sha) {
		if r.ExternalID != run && !strings.HasPrefix(r.ExternalID, run+"/") {
			continue
		}
		names = append(names, r.Name)
		if r.Conclusion != "cancelled" || !strings.Contains(r.Title+"\n"+r.Summary, reason) {
			e.t.Errorf("%s of run %s: %s %q, want cancelled saying %q:\n%s", r.Name, run, r.Conclusion, r.Title, reason, r.Summary)
		}
	}
	if slices.Sort(names); strings.Join(names, ",") != "kilroy/ci,kilroy/ci/vet" {
		e.t.Errorf("checks of run %s: %q, want kilroy/ci and kilroy/ci/vet\n%s", run, names, e.describeChecks())
	}
}

// editJSON re-encodes a payload changed by edit.
func (e *e2e) editJSON(body []byte, edit func(o jsonObject)) []byte {
	e.t.Helper()
	var o jsonObject
	if err := json.Unmarshal(body, &o); err != nil {
		e.t.Fatal(err)
	}
	edit(o)
	b, err := json.Marshal(o)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

// assertProcessGone fails when pid, a node process the bot started, still
// exists: the bot reaps its node processes, so a killed one is gone.
func assertProcessGone(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("node process %d still exists after the run was cancelled (kill -0: %v)", pid, err)
	}
}

// processesNamed lists the host pids of the processes named token (their
// argv[0]); node processes are visible from the bot's pid namespace.
func processesNamed(token string) []int {
	var out []int
	files, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil || !strings.HasPrefix(string(b), token+"\x00") {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(f))); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// TestServeE2EGracefulStopKillsNodes: stopping serve while a node runs
// leaves no process of that node behind (the run is handed back to be
// resumed at the next start).
func TestServeE2EGracefulStopKillsNodes(t *testing.T) {
	token := fmt.Sprintf("kilroy-hold-%d-%d", os.Getpid(), time.Now().UnixNano())
	e := newE2E(t, e2eOptions{files: map[string]string{"main.go": mainGo, ".kilroy/ci.dot": holdDOT(token)}})
	sha := e.repo.Commit(t, "feature-22", map[string]string{"README.md": "change\n"}, "change")
	e.deliver("pull_request", e.openPR("opened", pr{number: 22, sha: sha}))
	h := e.waitHolding(sha, token, 1)
	e.stop()
	assertProcessGone(t, h.pid)
	if left := processesNamed(token); len(left) > 0 {
		t.Errorf("node processes outlived serve: %v", left)
	}
}
