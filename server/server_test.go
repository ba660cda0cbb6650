package server

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
)

// ciPipeline has a tool node that builds, leaves an excluded artifact and
// prints its environment into the worktree, and an octagon verify node
// that fails with a finding on a line.
const ciPipeline = `digraph ci {
  start [shape=Mdiamond]
  exit [shape=Msquare]
  build [shape=parallelogram, tool_command="mkdir -p node_modules && echo junk > node_modules/junk.js && echo built > out.txt && env > env.txt"]
  verify [shape=octagon, command="echo 'main.go:3: x declared and not used'; exit 1"]
  start -> build -> verify -> exit
}
`

// blockingPipeline's node runs until the run is cancelled.
const blockingPipeline = `digraph ci {
  start [shape=Mdiamond]
  exit [shape=Msquare]
  wait [shape=parallelogram, tool_command="while true; do sleep 0.05; done"]
  start -> wait -> exit
}
`

// seed gives the base repository a main branch with files and returns it.
func (e *serverEnv) seed(files map[string]string) string {
	base := map[string]string{"main.go": "package main\n\nfunc main() { x := 1 }\n"}
	for k, v := range files {
		base[k] = v
	}
	return e.repo.Commit(e.t, "main", base, "initial")
}

// openPR pushes a branch with files and opens pull request n by author.
func (e *serverEnv) openPR(n int, author string, files map[string]string) ghapptest.Pull {
	sha := e.repo.Commit(e.t, "feature-"+strconv.Itoa(n), files, "change")
	p := ghapptest.Pull{Number: n, HeadSHA: sha, Author: author, Files: keys(files)}
	e.gh.PutPull("octo", "widgets", p)
	return p
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestServerTrustedPullRequest: a writer's pull request runs on its own;
// the run branch reaches GitHub with one commit per node and without
// excluded artifacts; the Reporter hears queued → adopt → the engine →
// close; and no token reaches a node or the run directory.
func TestServerTrustedPullRequest(t *testing.T) {
	e := newServerEnv(t)
	e.seed(map[string]string{".kilroy/ci.dot": ciPipeline})
	e.gh.SetPermission("octo", "widgets", "alice", "write")
	pr := e.openPR(1, "alice", map[string]string{"README.md": "hi\n"})

	e.handle(e.prEvent("opened", pr))
	run := e.newRun("ci", 0)
	if run.HeadSHA != pr.HeadSHA || run.PR != 1 || run.Graph == nil {
		t.Fatalf("run target = %+v, want head %s of PR 1 with its graph", run, pr.HeadSHA)
	}
	calls := e.reps.waitEnd(t, run.RunID)
	want := []string{"queued", "adopt",
		"node_started start", "node_finished start success", "checkpointed start",
		"node_started build", "node_finished build success", "checkpointed build",
		"node_started verify", "node_finished verify fail", "checkpointed verify",
		"run_finished fail", "close"}
	if diff := cmp.Diff(calls, want); diff != "" {
		t.Errorf("reporter calls (-got +want):\n%s", diff)
	}

	branch := "kilroy/run/ci/" + run.RunID
	log := e.repo.Git(t, "log", "--format=%s", pr.HeadSHA+".."+branch)
	wantLog := strings.Join([]string{
		"kilroy(" + run.RunID + "): verify (fail)",
		"kilroy(" + run.RunID + "): build (success)",
		"kilroy(" + run.RunID + "): start (success)",
	}, "\n")
	if log != wantLog {
		t.Errorf("pushed run branch log:\n%s\nwant:\n%s", log, wantLog)
	}
	files := e.repo.Git(t, "ls-tree", "-r", "--name-only", branch)
	if strings.Contains(files, "node_modules") || !strings.Contains(files, "out.txt") {
		t.Errorf("run branch files:\n%s\nwant out.txt and no node_modules", files)
	}
	env := e.repo.Git(t, "show", branch+":env.txt")
	if !strings.Contains(env, "KILROY_RUN_ID="+run.RunID) {
		t.Errorf("env.txt does not look like the node's environment:\n%s", env)
	}
	for _, tok := range e.gh.Tokens() {
		if strings.Contains(env, tok.Value()) {
			t.Errorf("a node saw an installation token (%s)", tok)
		}
	}
	if strings.Contains(env, "ghs_") {
		t.Error("a node's environment holds a ghs_ value")
	}
	e.waitRevoked()
	e.assertNoTokenIn(e.dataDir)
}

// TestServerForkPullRequest: a fork's pull request is gated with an
// action_required summary and runs nothing; a reader's `/kilroy run` is
// refused with a reply; a writer's runs the head with the base branch's
// pipeline, although the fork rewrote it, and says so in the summary.
func TestServerForkPullRequest(t *testing.T) {
	e := newServerEnv(t)
	e.seed(map[string]string{".kilroy/ci.dot": ciPipeline})
	e.gh.SetPermission("octo", "widgets", "maint", "write")
	e.gh.SetPermission("octo", "widgets", "reader", "read")
	fork := e.gh.AddRepo("forker", "widgets")
	evil := strings.Replace(ciPipeline, "env > env.txt", "echo pwned > pwned.txt", 1)
	sha := fork.Commit(t, "main", map[string]string{".kilroy/ci.dot": evil, "main.go": "package main\n"}, "fork change")
	pull := ghapptest.Pull{Number: 2, HeadSHA: sha, Author: "forker", HeadRepo: "forker/widgets",
		Files: []string{".kilroy/ci.dot", "main.go"}}
	e.gh.PutPull("octo", "widgets", pull)

	e.handle(e.prEvent("opened", pull))
	reps := e.reps.list()
	if len(reps) != 1 {
		t.Fatalf("reporters = %d, want 1 (the gated summary)", len(reps))
	}
	calls := reps[0].Calls()
	if len(calls) != 1 || !strings.HasPrefix(calls[0], "action_required ") ||
		!strings.Contains(calls[0], "write access can comment `/kilroy run`") || !strings.Contains(calls[0], "fork") {
		t.Fatalf("gated reporter calls = %q, want one action_required explaining /kilroy run", calls)
	}
	if got := e.reps.queuedRuns("ci"); len(got) != 0 {
		t.Fatalf("a fork's pull request was queued: %+v", got)
	}

	e.handle(e.commentEvent(2, "reader", Command{Verb: VerbRun}))
	if got := e.botComments(); len(got) != 1 || !strings.Contains(got[0], "@reader") || !strings.Contains(got[0], "write access") {
		t.Fatalf("replies = %q, want one telling @reader who may run", got)
	}
	if got := e.reps.queuedRuns("ci"); len(got) != 0 {
		t.Fatalf("a reader's command queued a run: %+v", got)
	}

	e.handle(e.commentEvent(2, "maint", Command{Verb: VerbRun}))
	run := e.newRun("ci", 0)
	if run.HeadSHA != sha || len(run.Notes) != 1 || !strings.Contains(run.Notes[0], ".kilroy/ci.dot") {
		t.Fatalf("run target = %+v, want the fork head with a note about .kilroy/ changes", run)
	}
	if got := e.gh.Reactions("octo", "widgets"); len(got) != 1 || got[0].Content != "eyes" {
		t.Errorf("reactions = %+v, want eyes on the accepted command", got)
	}
	e.reps.waitEnd(t, run.RunID)
	branch := "kilroy/run/ci/" + run.RunID
	files := e.repo.Git(t, "ls-tree", "-r", "--name-only", branch)
	if strings.Contains(files, "pwned.txt") || !strings.Contains(files, "env.txt") {
		t.Errorf("run branch files:\n%s\nwant the base branch pipeline's env.txt, not the fork's pwned.txt", files)
	}
	e.waitRevoked()
	e.assertNoTokenIn(e.dataDir)
}

// TestServerCommandReplies: unknown pipelines, unknown verbs and help get
// replies and run nothing; a repository without .kilroy/ does nothing.
func TestServerCommandReplies(t *testing.T) {
	e := newServerEnv(t)
	e.seed(map[string]string{".kilroy/ci.dot": ciPipeline})
	e.gh.SetPermission("octo", "widgets", "maint", "write")
	e.openPR(3, "maint", map[string]string{"README.md": "x\n"})

	e.handle(e.commentEvent(3, "maint", Command{Verb: VerbRun, Pipelines: []string{"cii"}}))
	e.handle(e.commentEvent(3, "maint", Command{Verb: VerbUnknown, Unknown: "rnu", Suggestion: "run"}))
	e.handle(e.commentEvent(3, "maint", Command{Verb: VerbHelp}))
	got := e.botComments()
	want := []string{"did you mean `ci`?", "Did you mean `/kilroy run`?", "`/kilroy answer NODE CHOICE`"}
	if len(got) != len(want) {
		t.Fatalf("replies = %q, want %d", got, len(want))
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Errorf("reply %d = %q, want it to contain %q", i, got[i], w)
		}
	}
	if runs := e.reps.queuedRuns("ci"); len(runs) != 0 {
		t.Errorf("replies queued runs: %+v", runs)
	}
}

func TestServerNoKilroy(t *testing.T) {
	e := newServerEnv(t)
	e.seed(nil)
	e.gh.SetPermission("octo", "widgets", "alice", "admin")
	pr := e.openPR(4, "alice", map[string]string{"README.md": "x\n"})
	e.handle(e.prEvent("opened", pr))
	if reps := e.reps.list(); len(reps) != 0 {
		t.Errorf("reporters for a repository without .kilroy/: %d", len(reps))
	}
	if cr := e.gh.CheckRuns("octo", "widgets"); len(cr) != 0 {
		t.Errorf("check runs for a repository without .kilroy/: %d", len(cr))
	}
}

// TestServerInvalidConfig: an invalid config and an invalid pipeline each
// fail a kilroy/config check annotated on the offending line; nothing runs.
func TestServerInvalidConfig(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string
		wantPath string
		wantLine int
	}{
		{"unknown config key", map[string]string{
			".kilroy/ci.dot":     ciPipeline,
			".kilroy/config.yml": "version: 1\npipelines:\n  ci:\n    grpah: .kilroy/ci.dot\n",
		}, ".kilroy/config.yml", 4},
		{"edge to an undeclared node", map[string]string{
			".kilroy/ci.dot": "digraph ci {\n  start [shape=Mdiamond]\n  exit [shape=Msquare]\n  start -> biuld\n  start -> exit\n}\n",
		}, ".kilroy/ci.dot", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newServerEnv(t)
			e.seed(nil)
			e.gh.SetPermission("octo", "widgets", "alice", "write")
			pr := e.openPR(5, "alice", tt.files)
			e.handle(e.prEvent("synchronize", pr))
			if runs := e.reps.queuedRuns("ci"); len(runs) != 0 {
				t.Errorf("an invalid configuration queued runs: %+v", runs)
			}
			var found bool
			for _, cr := range e.gh.CheckRuns("octo", "widgets") {
				if cr.Name != ConfigCheckName {
					continue
				}
				found = true
				if cr.HeadSHA != pr.HeadSHA || cr.Conclusion != "failure" {
					t.Errorf("config check on %s concluded %q, want failure on %s", cr.HeadSHA, cr.Conclusion, pr.HeadSHA)
				}
				var lines []string
				for _, a := range cr.Annotations {
					lines = append(lines, a.Path+":"+strconv.Itoa(a.StartLine))
				}
				if want := tt.wantPath + ":" + strconv.Itoa(tt.wantLine); !slices.Contains(lines, want) {
					t.Errorf("annotations %q, want one on %s (summary %q)", lines, want, cr.Summary)
				}
			}
			if !found {
				t.Fatalf("no %s check", ConfigCheckName)
			}
		})
	}
}

// waitNode waits until the run's reporter heard node start.
func (e *serverEnv) waitNode(runID, node string) {
	e.t.Helper()
	e.reps.waitFor(e.t, "node "+node+" of run "+runID, func() bool {
		return slices.Contains(e.reps.calls(runID), "node_started "+node)
	})
}

// TestServerSupersede: a push to a pull request cancels its running run,
// whose checks end "superseded by <sha>", and runs the new head.
func TestServerSupersede(t *testing.T) {
	e := newServerEnv(t)
	e.seed(map[string]string{".kilroy/ci.dot": ciPipeline})
	e.gh.SetPermission("octo", "widgets", "alice", "write")
	first := e.openPR(6, "alice", map[string]string{".kilroy/ci.dot": blockingPipeline})
	e.handle(e.prEvent("opened", first))
	run1 := e.newRun("ci", 0)
	e.waitNode(run1.RunID, "wait")

	second := first
	second.HeadSHA = e.repo.Commit(t, "feature-6", map[string]string{".kilroy/ci.dot": ciPipeline}, "unblock")
	e.gh.PutPull("octo", "widgets", second)
	e.handle(e.prEvent("synchronize", second))
	run2 := e.newRun("ci", 1)

	calls := e.reps.waitEnd(t, run1.RunID)
	if last := calls[len(calls)-1]; last != "cancel superseded by "+second.HeadSHA {
		t.Errorf("superseded run's last call = %q, want cancel superseded by %s (all: %q)", last, second.HeadSHA, calls)
	}
	if got := e.repo.Ref(t, "refs/heads/kilroy/run/ci/"+run1.RunID); got == "" {
		t.Error("the superseded run's branch was not pushed")
	}
	if calls := e.reps.waitEnd(t, run2.RunID); calls[len(calls)-1] != "close" {
		t.Errorf("new head's run calls = %q, want it to close", calls)
	}
	if run2.HeadSHA != second.HeadSHA {
		t.Errorf("second run on %s, want %s", run2.HeadSHA, second.HeadSHA)
	}
	e.waitRevoked()
}

// TestServerCancelCommand: `/kilroy cancel` from a writer cancels the
// running run; its checks say who cancelled it.
func TestServerCancelCommand(t *testing.T) {
	e := newServerEnv(t)
	e.seed(map[string]string{".kilroy/ci.dot": blockingPipeline})
	e.gh.SetPermission("octo", "widgets", "alice", "write")
	pr := e.openPR(7, "alice", map[string]string{"README.md": "x\n"})
	e.handle(e.prEvent("opened", pr))
	run := e.newRun("ci", 0)
	e.waitNode(run.RunID, "wait")

	e.handle(e.commentEvent(7, "alice", Command{Verb: VerbCancel}))
	calls := e.reps.waitEnd(t, run.RunID)
	if last := calls[len(calls)-1]; last != "cancel cancelled by @alice" {
		t.Errorf("cancelled run's last call = %q, want cancel cancelled by @alice", last)
	}
	e.handle(e.commentEvent(7, "alice", Command{Verb: VerbCancel}))
	if got := e.botComments(); len(got) != 1 || !strings.Contains(got[0], "Nothing to cancel") {
		t.Errorf("replies = %q, want one saying there is nothing to cancel", got)
	}
	e.waitRevoked()
}

// TestServerRerun: a check's Re-run button, delivered through Accept and
// the queue, runs that check's pipeline again on its head SHA, finding the
// pull request from the SHA→PR map; a reader's button does nothing.
func TestServerRerun(t *testing.T) {
	e := newServerEnv(t)
	e.seed(map[string]string{".kilroy/ci.dot": ciPipeline})
	e.gh.SetPermission("octo", "widgets", "alice", "write")
	e.gh.SetPermission("octo", "widgets", "reader", "read")
	pr := e.openPR(8, "alice", map[string]string{"README.md": "x\n"})
	first := e.prEvent("opened", pr)
	if res, err := e.srv.Accept(t.Context(), "d-open", "pull_request", first); err != nil || res.Duplicate {
		t.Fatalf("Accept = %+v, %v", res, err)
	}
	if res, err := e.srv.Accept(t.Context(), "d-open", "pull_request", first); err != nil || !res.Duplicate {
		t.Fatalf("redelivered Accept = %+v, %v; want Duplicate", res, err)
	}
	e.reps.waitFor(t, "the first run to be queued", func() bool { return len(e.reps.queuedRuns("ci")) == 1 })
	run1 := e.newRun("ci", 0)
	e.reps.waitEnd(t, run1.RunID)

	rerun := Event{Kind: KindRerun, Action: "rerequested", InstallationID: e.gh.InstallationID("octo"),
		Repo: e.baseRepo(), Sender: Actor{Login: "reader", Type: "User"},
		CheckRun: CheckRun{Name: "kilroy/ci/verify", HeadSHA: pr.HeadSHA, ExternalID: run1.RunID + "/verify"}}
	e.handle(rerun)
	if runs := e.reps.queuedRuns("ci"); len(runs) != 1 {
		t.Fatalf("a reader's re-run queued a run: %+v", runs)
	}
	rerun.Sender.Login = "alice"
	if _, err := e.srv.Accept(t.Context(), "d-rerun", "check_run", rerun); err != nil {
		t.Fatal(err)
	}
	e.reps.waitFor(t, "the re-run to be queued", func() bool { return len(e.reps.queuedRuns("ci")) == 2 })
	run2 := e.newRun("ci", 1)
	if run2.HeadSHA != pr.HeadSHA || run2.PR != 8 || run2.RunID == run1.RunID {
		t.Fatalf("re-run target = %+v, want a new run of PR 8 at %s", run2, pr.HeadSHA)
	}
	if calls := e.reps.waitEnd(t, run2.RunID); calls[len(calls)-1] != "close" {
		t.Errorf("re-run calls = %q", calls)
	}
	e.waitRevoked()
}

// TestServerFilters: drafts are skipped unless a pipeline opts in, and a
// pipeline with paths runs only when a changed file matches.
func TestServerFilters(t *testing.T) {
	e := newServerEnv(t)
	e.seed(nil)
	e.gh.SetPermission("octo", "widgets", "alice", "write")
	config := "version: 1\npipelines:\n  ci:\n    on:\n      paths: [\"**/*.go\"]\n  drafty:\n    graph: .kilroy/ci.dot\n    on:\n      drafts: true\n"
	files := map[string]string{".kilroy/ci.dot": ciPipeline, ".kilroy/config.yml": config}
	pr := e.openPR(9, "alice", files)

	draft := pr
	draft.Draft = true
	e.handle(e.prEvent("opened", draft))
	if got, want := len(e.reps.queuedRuns("drafty")), 1; got != want {
		t.Errorf("drafty runs on a draft = %d, want %d", got, want)
	}
	if got := len(e.reps.queuedRuns("ci")); got != 0 {
		t.Errorf("ci ran on a draft that changes no .go file: %d runs", got)
	}

	pr.HeadSHA = e.repo.Commit(t, "feature-9", map[string]string{"cmd/main.go": "package main\n"}, "go change")
	pr.Files = []string{".kilroy/ci.dot", ".kilroy/config.yml", "cmd/main.go"}
	e.gh.PutPull("octo", "widgets", pr)
	e.handle(e.prEvent("ready_for_review", pr))
	if got := len(e.reps.queuedRuns("ci")); got != 1 {
		t.Errorf("ci runs once a .go file changed = %d, want 1", got)
	}
	for _, p := range []string{"ci", "drafty"} {
		for _, r := range e.reps.queuedRuns(p) {
			e.reps.waitEnd(t, r.RunID)
		}
	}
	e.waitRevoked()
}
