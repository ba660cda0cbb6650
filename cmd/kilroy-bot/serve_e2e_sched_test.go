package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
)

// sleepDOT is a pipeline of one tool node, work, that takes about d.
func sleepDOT(d time.Duration) string {
	return fmt.Sprintf(`digraph ci {
  start [shape=Mdiamond]
  work [shape=parallelogram, tool_command="sleep %g"]
  done [shape=Msquare]
  start -> work -> done
}
`, d.Seconds())
}

// gatedDOT is a pipeline whose one node waits for gate to exist.
func gatedDOT(gate string) string {
	return fmt.Sprintf(`digraph ci {
  start [shape=Mdiamond]
  work [shape=parallelogram, tool_command=%q]
  done [shape=Msquare]
  start -> work -> done
}
`, fmt.Sprintf("while [ ! -e %s ]; do sleep 0.05; done", gate))
}

// e2eTenant is a repository of another installation than octo/widgets'.
type e2eTenant struct {
	owner, name string
	id          int64
	repo        *ghapptest.Repo
}

func (ten e2eTenant) full() string { return ten.owner + "/" + ten.name }

// addTenant adds owner/name, in an installation of its own, with files
// on main and alice as a writer.
func (e *e2e) addTenant(owner, name string, id int64, files map[string]string) e2eTenant {
	e.t.Helper()
	ten := e2eTenant{owner: owner, name: name, id: id, repo: e.gh.AddRepo(owner, name)}
	ten.repo.Commit(e.t, "main", files, "initial")
	e.gh.SetPermission(owner, name, "alice", "write")
	return ten
}

// openTenantPR commits a change on a branch of ten, registers the pull
// request with the fake, delivers its pull_request/opened and returns its
// head SHA.
func (e *e2e) openTenantPR(ten e2eTenant, number int) string {
	e.t.Helper()
	sha := ten.repo.Commit(e.t, fmt.Sprintf("feature-%d", number),
		map[string]string{"README.md": fmt.Sprintf("change %d\n", number)}, "change")
	e.gh.PutPull(ten.owner, ten.name, ghapptest.Pull{Number: number, HeadSHA: sha, Author: "alice",
		BaseRef: "main", Files: []string{"README.md"}})
	repo := e.repoJSON(ten.full(), ten.id)
	e.deliver("pull_request", e.payload("pull_request/opened.payload.json", func(o jsonObject) {
		o.set("repository", repo)
		o.set("installation", jsonObject{"id": e.gh.InstallationID(ten.owner)})
		o.set("number", number)
		pull := o.obj("pull_request")
		pull.set("number", number)
		pull.set("draft", false)
		pull.set("user", jsonObject{"login": "alice", "type": "User"})
		pull.obj("head").set("sha", sha)
		pull.obj("head").set("ref", fmt.Sprintf("feature-%d", number))
		pull.obj("head").set("repo", repo)
		pull.obj("base").set("ref", "main")
		pull.obj("base").set("repo", repo)
	}))
	return sha
}

// summaries are the kilroy/ci checks of ten, one per run.
func (e *e2e) summaries(ten e2eTenant) []*ghapptest.CheckRun {
	var out []*ghapptest.CheckRun
	for _, r := range e.gh.CheckRuns(ten.owner, ten.name) {
		if r.Name == "kilroy/ci" {
			out = append(out, r)
		}
	}
	return out
}

// started reports whether run id has started its work node: its stage
// directory exists.
func (e *e2e) started(id string) bool {
	_, err := os.Stat(filepath.Join(e.cfg.DataDir, "runs", id, "nodes", "work"))
	return err == nil
}

// TestServeE2EFairShare: one installation's repository has 20 pull
// requests queued, each a run of a 2 s node, on 2 workers; another
// installation's 1 s pipeline, enqueued after them, takes the first
// worker that frees instead of waiting for the 20.
func TestServeE2EFairShare(t *testing.T) {
	const prs, node = 20, 2 * time.Second
	e := newE2E(t, e2eOptions{files: map[string]string{"main.go": mainGo, ".kilroy/ci.dot": sleepDOT(node)}})
	big := e2eTenant{owner: e2eOwner, name: e2eName, id: e2eRepoID, repo: e.repo}
	for n := 1; n <= prs; n++ {
		e.openTenantPR(big, n)
	}
	e.waitFor(fmt.Sprintf("%d runs of %s queued", prs, e2eRepo), func() bool { return len(e.summaries(big)) == prs })

	small := e.addTenant("acme", "gadgets", 9001, map[string]string{"main.go": mainGo, ".kilroy/ci.dot": sleepDOT(time.Second)})
	e.openTenantPR(small, 1)
	e.waitFor("the run of acme/gadgets queued", func() bool { return len(e.summaries(small)) == 1 })
	enqueued := time.Now()
	startedThen := 0
	for _, r := range e.summaries(big) {
		if e.started(runID(r)) {
			startedThen++
		}
	}

	// Poll the starts of every run until the small one's; the big runs
	// seen started before it were all started when it was enqueued, but
	// one dispatched just before that and not yet seen.
	smallID := runID(e.summaries(small)[0])
	seen := map[string]bool{}
	e.waitFor("the run of acme/gadgets to start", func() bool {
		for _, r := range e.summaries(big) {
			if e.started(runID(r)) {
				seen[runID(r)] = true
			}
		}
		return e.started(smallID)
	})
	t.Logf("acme/gadgets started %s after it was queued; %d of %s's runs had started then, %d before it started",
		time.Since(enqueued).Round(10*time.Millisecond), startedThen, e2eRepo, len(seen))
	if len(seen) > startedThen+1 {
		t.Errorf("%d of %s's runs started before acme/gadgets' run, which was queued when %d had: it waited its turn behind them",
			len(seen), e2eRepo, startedThen)
	}
	e.waitFor("the run of acme/gadgets to complete", func() bool { return allCompleted(e.summaries(small)) })
	if c := e.summaries(small)[0]; c.Conclusion != "success" {
		t.Errorf("acme/gadgets' run concluded %s, want success: %s", c.Conclusion, c.Title)
	}
}

// TestServeE2ERepositoryCap: with max_runs_per_repository 1 and two
// workers, two long runs of one repository do not hold both workers: the
// second waits queued, its check saying why, while another repository's
// run takes the other worker; it starts when the first ends.
func TestServeE2ERepositoryCap(t *testing.T) {
	gate := newGate(t)
	e := newE2E(t, e2eOptions{policy: "limits: {max_runs_per_repository: 1}\n",
		files: map[string]string{"main.go": mainGo, ".kilroy/ci.dot": gatedDOT(gate)}})
	long := e2eTenant{owner: e2eOwner, name: e2eName, id: e2eRepoID, repo: e.repo}
	e.openTenantPR(long, 1)
	e.waitFor("the first long run to start", func() bool {
		s := e.summaries(long)
		return len(s) == 1 && e.started(runID(s[0]))
	})
	first := runID(e.summaries(long)[0])
	e.openTenantPR(long, 2)
	e.waitFor("the second long run queued", func() bool { return len(e.summaries(long)) == 2 })
	second := runID(e.summaries(long)[1])

	other := e.addTenant("acme", "gadgets", 9001, map[string]string{"main.go": mainGo, ".kilroy/ci.dot": sleepDOT(0)})
	e.openTenantPR(other, 1)
	e.waitFor("acme/gadgets' run to complete", func() bool {
		s := e.summaries(other)
		return len(s) == 1 && allCompleted(s)
	})
	if e.started(second) {
		t.Fatalf("the second run of %s started while the first held the repository's one slot", e2eRepo)
	}
	if !e.started(first) {
		t.Fatalf("the first run of %s is not running", e2eRepo)
	}
	e.waitFor("the second run's check to say why it waits", func() bool {
		c := e.summaries(long)[1]
		return c.Status == "queued" && strings.Contains(c.Summary, "max_runs_per_repository")
	})

	touch(t, gate)
	e.waitFor("both runs of "+e2eRepo+" to complete", func() bool {
		s := e.summaries(long)
		return len(s) == 2 && allCompleted(s)
	})
	e.waitIdle()
	for _, c := range e.summaries(long) {
		if c.Conclusion != "success" {
			t.Errorf("run %s concluded %s, want success: %s", runID(c), c.Conclusion, c.Title)
		}
	}
}

// TestServeE2EFairnessDefaults: with no caps in the server policy and two
// workers, three long runs of one repository do not hold both workers:
// another installation's one-node run, queued after them, starts and
// completes while they still wait at their gate.
func TestServeE2EFairnessDefaults(t *testing.T) {
	gate := newGate(t)
	e := newE2E(t, e2eOptions{files: map[string]string{"main.go": mainGo, ".kilroy/ci.dot": gatedDOT(gate)}})
	long := e2eTenant{owner: e2eOwner, name: e2eName, id: e2eRepoID, repo: e.repo}
	for n := 1; n <= 3; n++ {
		e.openTenantPR(long, n)
	}
	e.waitFor("three long runs queued, one started", func() bool {
		s := e.summaries(long)
		return len(s) == 3 && e.started(runID(s[0]))
	})

	other := e.addTenant("acme", "gadgets", 9001, map[string]string{"main.go": mainGo, ".kilroy/ci.dot": sleepDOT(0)})
	e.openTenantPR(other, 1)
	e.waitFor("acme/gadgets' run to complete while "+e2eRepo+"'s runs hold their gate", func() bool {
		s := e.summaries(other)
		return len(s) == 1 && allCompleted(s)
	})
	started := 0
	for _, c := range e.summaries(long) {
		if e.started(runID(c)) {
			started++
		}
	}
	if started != 1 {
		t.Errorf("%d runs of %s started on two workers, want 1 (the default cap of an installation is --workers minus one)", started, e2eRepo)
	}
	if c := e.summaries(other)[0]; c.Conclusion != "success" {
		t.Errorf("acme/gadgets' run concluded %s, want success: %s", c.Conclusion, c.Title)
	}
	touch(t, gate)
	e.waitFor("the runs of "+e2eRepo+" to complete", func() bool { return allCompleted(e.summaries(long)) })
	e.waitIdle()
}
