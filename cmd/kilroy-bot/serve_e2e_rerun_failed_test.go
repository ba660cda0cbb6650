package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
)

// slowThenCheckDOT: a slow first node that writes a value of its own
// making (the time it ran, to the nanosecond) into the worktree, and a
// last verify node that fails until the gate file exists.
func slowThenCheckDOT(gate string) string {
	return fmt.Sprintf(`digraph ci {
  start [shape=Mdiamond]
  slow [shape=parallelogram, tool_command="sleep 2; date +%%s%%N > slow.txt"]
  check [shape=octagon, command="test -e %s || { echo 'FAIL: the gate is closed'; exit 1; }"]
  done [shape=Msquare]
  start -> slow -> check -> done
}
`, gate)
}

// ranNodes are the nodes run id started, from its progress.ndjson.
func (e *e2e) ranNodes(id string) []string {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join(e.cfg.DataDir, "runs", id, "progress.ndjson"))
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, `"type":"node_started"`) {
			for _, n := range []string{"start", "slow", "check", "done"} {
				if strings.Contains(line, `"node":"`+n+`"`) {
					out = append(out, n)
				}
			}
		}
	}
	return out
}

// checkpointOf is the commit of node's checkpoint on run id's branch on
// the fake GitHub.
func (e *e2e) checkpointOf(id, node string) string {
	e.t.Helper()
	log := e.repo.Git(e.t, "log", "--format=%H %s", "kilroy/run/ci/"+id)
	for _, line := range strings.Split(log, "\n") {
		sha, subject, _ := strings.Cut(line, " ")
		if strings.Contains(subject, ": "+node+" (") {
			return sha
		}
	}
	e.t.Fatalf("no checkpoint of %s on kilroy/run/ci/%s:\n%s", node, id, log)
	return ""
}

// newestSummary is the newest kilroy/ci check on sha.
func (e *e2e) newestSummary(sha string) *ghapptest.CheckRun {
	runs := e.named(sha, "kilroy/ci")
	return runs[len(runs)-1]
}

// pressRerunFailed delivers the "Re-run from failure" requested action of
// check run sum: an edited copy of the shared requested_action example (our
// App, our check, the rerun_failed identifier; pull_requests empty, as for
// forks, so the bot finds the pull request by its head SHA).
func (e *e2e) pressRerunFailed(sum *ghapptest.CheckRun) {
	e.t.Helper()
	e.deliver("check_run", e.payload("check_run/requested_action.payload.json", func(o jsonObject) {
		cr := o.obj("check_run")
		cr.set("id", sum.ID)
		cr.set("name", sum.Name)
		cr.set("head_sha", sum.HeadSHA)
		cr.set("external_id", sum.ExternalID)
		cr.set("app", jsonObject{"id": e.gh.AppID(), "slug": e.gh.AppSlug()})
		cr.set("pull_requests", []any{})
		cr.obj("check_suite").set("head_sha", sum.HeadSHA)
		o.set("requested_action", jsonObject{"identifier": "rerun_failed"})
		delete(o, "organization")
	}))
}

// TestServeE2ERerunFromFailure: a run whose slow first node passes and
// whose last node fails offers "Re-run from failure". `/kilroy run
// --from-failure` and then the button each start a new run on the same
// head that resumes at the checkpoint before the failed node: the slow
// node does not run again, its checkpoint commit is the one the new run
// branch builds on, and the check completes (success once the gate is
// open). The plain Re-run then starts over: the slow node runs again.
func TestServeE2ERerunFromFailure(t *testing.T) {
	gate := newGate(t)
	e := newE2E(t, e2eOptions{files: map[string]string{"main.go": mainGo, ".kilroy/ci.dot": slowThenCheckDOT(gate)}})
	sha := e.repo.Commit(t, "feature-9", map[string]string{"README.md": "change\n"}, "change")
	e.deliver("pull_request", e.openPR("opened", pr{number: 9, sha: sha}))
	e.waitSettled(sha, "kilroy/ci", "kilroy/ci/check")
	e.waitIdle()
	first := e.newestSummary(sha)
	if first.Conclusion != "failure" {
		t.Fatalf("first run %s, want failure:\n%s", first.Conclusion, e.describeChecks())
	}
	if !slices.ContainsFunc(first.Actions, func(a ghapptest.Action) bool { return a.Identifier == "rerun_failed" }) {
		t.Errorf("the failed summary check offers %+v, want a rerun_failed button", first.Actions)
	}
	run1 := runID(first)
	slowCommit := e.checkpointOf(run1, "slow")

	// The comment: the check still fails, but slow does not run again.
	e.deliver("issue_comment", e.comment(9, "carol", "/kilroy run --from-failure"))
	e.waitFor("the run resumed by the comment", func() bool {
		return len(e.named(sha, "kilroy/ci")) == 2 && allCompleted(e.checkRuns(sha))
	})
	e.waitIdle()
	second := e.newestSummary(sha)
	run2 := runID(second)
	if second.Conclusion != "failure" || run2 == run1 {
		t.Fatalf("resumed run %s: %s, want a new run that fails again at check", run2, second.Conclusion)
	}
	assertResumed(t, e, run2, slowCommit)

	// The button, with the gate open: the resumed run passes.
	touch(t, gate)
	e.pressRerunFailed(second)
	e.waitFor("the run resumed by the button", func() bool {
		return len(e.named(sha, "kilroy/ci")) == 3 && allCompleted(e.checkRuns(sha))
	})
	e.waitIdle()
	third := e.newestSummary(sha)
	run3 := runID(third)
	if third.Conclusion != "success" {
		t.Fatalf("run resumed by the button: %s, want success:\n%s", third.Conclusion, e.describeChecks())
	}
	assertResumed(t, e, run3, slowCommit)
	if !strings.Contains(third.Summary, "Re-run from the failure of run") || !strings.Contains(third.Summary, run2) {
		t.Errorf("the resumed run's summary does not say what it resumed:\n%s", third.Summary)
	}
	if !strings.Contains(third.Summary, "`"+slowCommit[:7]+"`") {
		t.Errorf("the resumed run's node table does not link slow's reused checkpoint %.7s:\n%s", slowCommit, third.Summary)
	}
	for _, c := range e.named(sha, "kilroy/ci/check") {
		if c.Status != "completed" {
			t.Errorf("kilroy/ci/check %s left %s", c.ExternalID, c.Status)
		}
	}

	// The plain Re-run starts over.
	e.deliver("check_run", e.payload("check_run/rerequested.payload.json", func(o jsonObject) {
		cr := o.obj("check_run")
		cr.set("name", third.Name)
		cr.set("head_sha", sha)
		cr.set("external_id", third.ExternalID)
		cr.set("app", jsonObject{"id": e.gh.AppID(), "slug": e.gh.AppSlug()})
		cr.set("pull_requests", []any{})
		cr.obj("check_suite").set("head_sha", sha)
		delete(o, "organization")
	}))
	e.waitFor("the plain re-run", func() bool {
		return len(e.named(sha, "kilroy/ci")) == 4 && allCompleted(e.checkRuns(sha))
	})
	e.waitIdle()
	run4 := runID(e.newestSummary(sha))
	if got := e.ranNodes(run4); !slices.Contains(got, "slow") || !slices.Contains(got, "start") {
		t.Errorf("plain re-run started %v, want every node from start", got)
	}
	if c := e.checkpointOf(run4, "slow"); c == slowCommit {
		t.Errorf("plain re-run reused slow's checkpoint %s: it must start over", c)
	}

	// A failed run whose directory is gone (swept, or on another replica)
	// cannot be resumed: the button's run starts over and says why.
	if err := os.RemoveAll(filepath.Join(e.cfg.DataDir, "runs", run1)); err != nil {
		t.Fatal(err)
	}
	e.pressRerunFailed(first)
	e.waitFor("the run that could not resume", func() bool {
		return len(e.named(sha, "kilroy/ci")) == 5 && allCompleted(e.checkRuns(sha))
	})
	e.waitIdle()
	fifth := e.newestSummary(sha)
	if got := e.ranNodes(runID(fifth)); !slices.Contains(got, "slow") {
		t.Errorf("the run that could not resume started %v, want every node", got)
	}
	if !strings.Contains(fifth.Summary, "not on this server") || !strings.Contains(fifth.Summary, "this run starts over") || fifth.Conclusion != "success" || strings.Contains(fifth.Summary, e.cfg.DataDir) {
		t.Errorf("the run that could not resume: %s, summary:\n%s", fifth.Conclusion, fifth.Summary)
	}
	e.assertAllCompleted()
}

// assertResumed checks that run id resumed at the check node: it started
// no node before it, and its branch holds the failed run's checkpoint of
// slow, the same commit, with its own commits on top.
func assertResumed(t *testing.T, e *e2e, id, slowCommit string) {
	t.Helper()
	if got := e.ranNodes(id); slices.Contains(got, "slow") || slices.Contains(got, "start") || !slices.Contains(got, "check") {
		t.Errorf("run %s started %v, want check and what follows only", id, got)
	}
	if c := e.checkpointOf(id, "slow"); c != slowCommit {
		t.Errorf("run %s: slow's checkpoint %s, want the failed run's %s reused", id, c, slowCommit)
	}
	log := e.repo.Git(t, "log", "--format=%s", slowCommit+"..kilroy/run/ci/"+id)
	if !strings.Contains(log, "kilroy("+id+"): check (") {
		t.Errorf("run %s's branch has no commit of its own for check after slow's checkpoint:\n%s", id, log)
	}
}
