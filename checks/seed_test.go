package checks

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
)

// TestRecorderSeedMatchesListening interrupts a run with a retry and a
// jump after check's checkpoint: a recorder seeded with what came before
// and hearing only the resumed engine ends with the view of one that heard
// the whole run.
func TestRecorderSeedMatchesListening(t *testing.T) {
	const src = `digraph loop {
  start [shape=Mdiamond]
  code [shape=box, prompt="write it"]
  check [shape=octagon, command="make check", retry_target="code"]
  done [shape=Msquare]
  start -> code -> check -> done
}
`
	retry := attractor.Outcome{Status: attractor.StatusRetry, FailureReason: "flaky"}
	fail := attractor.Outcome{Status: attractor.StatusFail, FailureReason: "make check exited with status 2"}
	res := &attractor.RunResult{Status: attractor.StatusSuccess, Completed: []string{"start", "code", "check", "code", "check", "done"}}
	resumed := func(s *script) *RunView {
		return s.pass("code", sha(4), "check", time.Second).pass("check", sha(5), "done", time.Second).
			pass("done", sha(6), "", 0).finish(res)
	}

	whole := newScript(t, src, RunInfo{RunID: "r1"})
	whole.pass("start", sha(1), "code", 0).pass("code", sha(2), "check", time.Second).
		start("check").attempt("check", false, retry, time.Second).attempt("check", true, fail, 2*time.Second).checkpoint("check", sha(3))
	whole.must(whole.r.EdgeSelected(t.Context(), attractor.EdgeSelected{From: "check", To: "code", Method: attractor.ByRetryTarget}))
	want := resumed(whole)

	s := newScript(t, src, RunInfo{RunID: "r1"})
	s.r.Seed(Prior{
		Nodes: []PriorNode{
			{ID: "start", Visits: 1, Attempts: 1, Outcome: attractor.Outcome{Status: attractor.StatusSuccess}, CheckpointSHA: sha(1), Dir: "/stages/start"},
			{ID: "code", Visits: 1, Attempts: 1, Duration: time.Second, Outcome: attractor.Outcome{Status: attractor.StatusSuccess}, CheckpointSHA: sha(2), Dir: "/stages/code"},
			{ID: "check", Visits: 1, Attempts: 2, Duration: 3 * time.Second, Outcome: fail, CheckpointSHA: sha(3), Dir: "/stages/check"},
		},
		Edges: []PriorEdge{
			{From: "start", To: "code", Method: attractor.ByLexical},
			{From: "code", To: "check", Method: attractor.ByLexical},
			{From: "check", To: "code", Method: attractor.ByRetryTarget},
		},
	})
	v := s.r.View()
	if v.Status != RunRunning {
		t.Errorf("run %s after Seed, want running: it was under way when interrupted", v.Status)
	}
	if n := v.Node("check"); n.State != StateFailed || n.Attempts != 2 || n.CheckpointSHA != sha(3) {
		t.Errorf("check after Seed: %s, %d attempts, checkpoint %s; want failed, 2, %s", n.State, n.Attempts, n.CheckpointSHA, sha(3))
	}
	if diff := cmp.Diff(resumed(s), want); diff != "" {
		t.Errorf("seeded view differs from the view of the whole run (-seeded +whole):\n%s", diff)
	}
}

// TestPublisherSeedAfterRestart restarts the bot after vet: the resumed
// run's Publisher, seeded with the nodes before the restart, shows their
// attempts, durations and checkpoints in the summary check, and leaves
// vet's completed check alone.
func TestPublisherSeedAfterRestart(t *testing.T) {
	e := newGHEnv(t)
	p := load(t, ciDOT)
	first := e.publisher(p, nil, e.options())
	mustOK(t, first.Queued(t.Context()))
	(&driver{t: t, p: p, l: first}).pass("start", "build").pass("build", "vet").pass("vet", "artifacts")
	waitFor(t, "vet completed", func() bool { return e.run("kilroy/ci/vet").Status == StatusCompleted })
	vetRequests := len(e.run("kilroy/ci/vet").Requests)
	first.worker.stop(t.Context()) // the process dies

	// What the runner reads back from the run directory; driver.pass
	// records 1.5s and checkpoint sha(len(id)) per node.
	ok := attractor.Outcome{Status: attractor.StatusSuccess}
	var prior Prior
	for _, id := range []string{"start", "build", "vet"} {
		prior.Nodes = append(prior.Nodes, PriorNode{ID: id, Visits: 1, Attempts: 1, Duration: 1500 * time.Millisecond,
			Outcome: ok, CheckpointSHA: sha(byte(len(id)))})
	}
	prior.Edges = []PriorEdge{{"start", "build", attractor.ByLexical}, {"build", "vet", attractor.ByLexical}, {"vet", "artifacts", attractor.ByCondition}}

	second := e.publisher(p, nil, e.options())
	second.Seed(prior)
	mustOK(t, second.Adopt(t.Context()))
	d := &driver{t: t, p: p, l: second}
	d.pass("artifacts", "done").pass("done", "")
	d.finish(runPassed)
	mustOK(t, second.Close(t.Context()))

	summary := e.run("kilroy/ci")
	if summary.Status != StatusCompleted || summary.Conclusion != ConclusionSuccess {
		t.Errorf("summary check %s/%s, want completed/success", summary.Status, summary.Conclusion)
	}
	body := summary.Summary + "\n" + summary.Text
	for _, id := range []string{"start", "build", "vet"} {
		want := " | 1 | 1.5s | [`" + sha(byte(len(id)))[:7] + "`]("
		if !rowHas(body, id, want) {
			t.Errorf("summary check's row of %s lacks %q:\n%s", id, want, body)
		}
	}
	if n := len(e.run("kilroy/ci/vet").Requests); n != vetRequests {
		t.Errorf("vet had %d requests after the restart, want %d: a completed check is left alone", n, vetRequests)
	}
	if n := len(e.runs()); n != 3 {
		t.Errorf("%d check runs, want the 3 from before the restart", n)
	}
}

// TestPublisherSeedVerifyCheckNeverSent resumes a run whose checks never
// reached GitHub before the interruption: the failed vet visit before it
// gets its own completed check with its findings, and the visit after the
// resume a new one, as if the bot had never stopped.
func TestPublisherSeedVerifyCheckNeverSent(t *testing.T) {
	const loopDOT = `digraph ci {
  start [shape=Mdiamond]
  vet [shape=octagon, command="go vet ./..."]
  fix [shape=parallelogram, tool_command="gofmt -w ."]
  done [shape=Msquare]
  start -> vet
  vet -> done [condition="outcome=success"]
  vet -> fix [condition="outcome!=success"]
  fix -> vet
}
`
	e := newGHEnv(t)
	p := load(t, loopDOT)
	pub := e.publisher(p, nil, e.options())
	pub.Seed(Prior{
		Nodes: []PriorNode{
			{ID: "start", Visits: 1, Attempts: 1, Outcome: attractor.Outcome{Status: attractor.StatusSuccess}, CheckpointSHA: sha(1)},
			{ID: "vet", Visits: 1, Attempts: 1, Duration: time.Second, Outcome: vetFails(vetFindings(3)), CheckpointSHA: sha(2)},
		},
		Edges: []PriorEdge{{"start", "vet", attractor.ByLexical}, {"vet", "fix", attractor.ByCondition}},
	})
	mustOK(t, pub.Adopt(t.Context()))
	d := &driver{t: t, p: p, l: pub}
	d.pass("fix", "vet").pass("vet", "done").pass("done", "")
	d.finish(&attractor.RunResult{RunID: "r1", Status: attractor.StatusSuccess, Completed: []string{"start", "vet", "fix", "vet", "done"}})
	mustOK(t, pub.Close(t.Context()))

	var vets []*ghapptest.CheckRun
	for _, r := range e.runs() {
		if r.Name == "kilroy/ci/vet" {
			vets = append(vets, r)
		}
	}
	if len(vets) != 2 {
		t.Fatalf("%d vet check runs, want one per visit", len(vets))
	}
	if vets[0].Conclusion != ConclusionFailure || len(vets[0].Annotations) != 3 || vets[1].Conclusion != ConclusionSuccess || len(vets[1].Annotations) != 0 {
		t.Errorf("vet visits: %s (%d annotations), %s (%d); want failure (3), success (0)",
			vets[0].Conclusion, len(vets[0].Annotations), vets[1].Conclusion, len(vets[1].Annotations))
	}
	if body := e.run("kilroy/ci").Summary + e.run("kilroy/ci").Text; !rowHas(body, "vet", " | 2 | 2.5s | ") {
		t.Errorf("summary check's vet row does not count both visits' attempts (1s + 1.5s):\n%s", body)
	}
}

// rowHas reports whether the node table in body has a row for id
// containing want.
func rowHas(body, id, want string) bool {
	for line := range strings.Lines(body) {
		if strings.HasPrefix(line, "| `"+id+"` ") && strings.Contains(line, want) {
			return true
		}
	}
	return false
}
