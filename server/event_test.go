package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
	"github.com/kilroy-bot/kilroy-bot/policy"
	"github.com/kilroy-bot/kilroy-bot/queue"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

func TestCommandPipelines(t *testing.T) {
	cfg := &policy.RepoConfig{Pipelines: map[string]policy.Pipeline{
		"ci":     {Name: "ci", Command: true},
		"lint":   {Name: "lint", Command: true},
		"deploy": {Name: "deploy", Command: false},
	}}
	tests := []struct {
		want      []string
		wantNames []string
		wantMsg   string // substring; "" for none
	}{
		{nil, []string{"ci", "lint"}, ""},
		{[]string{"lint"}, []string{"lint"}, ""},
		{[]string{"lnit"}, nil, "did you mean `lint`?"},
		{[]string{"deploy"}, nil, "`deploy` may not be started by a comment"},
		{[]string{"ci", "nope"}, nil, "there is no pipeline `nope`"},
	}
	for _, tt := range tests {
		names, msg := commandPipelines(cfg, tt.want, "the base branch")
		if diff := cmp.Diff(names, tt.wantNames); diff != "" {
			t.Errorf("commandPipelines(%q) names (-got +want):\n%s", tt.want, diff)
		}
		if (tt.wantMsg == "") != (msg == "") || !strings.Contains(msg, tt.wantMsg) {
			t.Errorf("commandPipelines(%q) msg = %q, want it to contain %q", tt.want, msg, tt.wantMsg)
		}
	}
}

func TestPipelineOfCheck(t *testing.T) {
	for name, want := range map[string]string{
		"kilroy/ci":        "ci",
		"kilroy/ci/verify": "ci",
		"kilroy/config":    "",
		"other/ci":         "",
		"":                 "",
	} {
		if got := pipelineOfCheck(name); got != want {
			t.Errorf("pipelineOfCheck(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestAnyMatch(t *testing.T) {
	files := []string{"cmd/main.go", "docs/readme.md"}
	if !anyMatch([]string{"**/*.go"}, files) {
		t.Error("**/*.go does not match cmd/main.go")
	}
	if anyMatch([]string{"*.go", "go.mod"}, files) {
		t.Error("*.go matched a file in a subdirectory")
	}
}

// closedEvent is the event the webhook makes of a closed pull_request
// delivery for p, closed (or merged) by sender.
func (e *serverEnv) closedEvent(p ghapptest.Pull, sender string, merged bool) Event {
	ev := e.prEvent(ActionClosed, p)
	ev.Kind, ev.PR.Merged, ev.Sender = KindCancel, merged, Actor{Login: sender, Type: "User"}
	return ev
}

// handleRetrying decides ev like handle, retrying as the event queue would
// while it coalesces into a cancelled run whose job River has not yet
// finalised (errRunFinishing).
func (e *serverEnv) handleRetrying(ev Event) {
	e.t.Helper()
	payload, err := json.Marshal(ev)
	if err != nil {
		e.t.Fatal(err)
	}
	id := fmt.Sprintf("delivery-%d", e.deliver.Add(1))
	deadline := time.Now().Add(serverWait)
	for {
		err := e.srv.HandleEvent(context.Background(), queue.EventJob{
			EventArgs: queue.EventArgs{DeliveryID: id, Event: string(ev.Kind), Payload: payload}})
		if err == nil {
			return
		}
		if !errors.Is(err, errRunFinishing) || time.Now().After(deadline) {
			e.t.Fatalf("HandleEvent(%s %s): %v", ev.Kind, ev.Action, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lastCall is the last thing a run's reporters were told.
func (e *serverEnv) lastCall(runID string) string {
	calls := e.reps.calls(runID)
	if len(calls) == 0 {
		return ""
	}
	return calls[len(calls)-1]
}

// TestServerPullRequestClosed: closing a pull request cancels its runs of
// every pipeline, queued and running alike, like `/kilroy cancel`; the
// checks say it was closed or merged and by whom, nothing is posted on the
// pull request, the other pull request's runs go on, and closing again is
// a quiet no-op. Reopening runs again.
func TestServerPullRequestClosed(t *testing.T) {
	e := newServerEnv(t)
	lint := strings.Replace(blockingPipeline, "digraph ci", "digraph lint", 1)
	e.seed(map[string]string{".kilroy/ci.dot": blockingPipeline, ".kilroy/lint.dot": lint})
	e.gh.SetPermission("octo", "widgets", "alice", "write")

	// Pull request 8's two runs take both workers, so 9's wait queued.
	first := e.openPR(8, "alice", map[string]string{"README.md": "eight\n"})
	e.handle(e.prEvent("opened", first))
	ci8, lint8 := e.newRun("ci", 0), e.newRun("lint", 0)
	e.waitNode(ci8.RunID, "wait")
	e.waitNode(lint8.RunID, "wait")
	second := e.openPR(9, "alice", map[string]string{"README.md": "nine\n"})
	e.handle(e.prEvent("opened", second))
	ci9, lint9 := e.newRun("ci", 1), e.newRun("lint", 1)

	e.handle(e.closedEvent(second, "bob", true))
	for _, r := range []ReportTarget{ci9, lint9} {
		if got, want := e.lastCall(r.RunID), "cancel cancelled by @bob (pull request merged)"; got != want {
			t.Errorf("queued run %s of #9: last call %q, want %q (all: %q)", r.Pipeline, got, want, e.reps.calls(r.RunID))
		}
		if slices.Contains(e.reps.calls(r.RunID), "node_started wait") {
			t.Errorf("queued run %s of #9 started after its pull request was merged", r.Pipeline)
		}
	}
	for _, r := range []ReportTarget{ci8, lint8} {
		if strings.HasPrefix(e.lastCall(r.RunID), "cancel ") {
			t.Errorf("run %s of #8 was cancelled by closing #9", r.Pipeline)
		}
	}

	e.handle(e.closedEvent(first, "alice", false))
	for _, r := range []ReportTarget{ci8, lint8} {
		calls := e.reps.waitEnd(t, r.RunID)
		if got, want := calls[len(calls)-1], "cancel cancelled by @alice (pull request closed)"; got != want {
			t.Errorf("running run %s of #8: last call %q, want %q (all: %q)", r.Pipeline, got, want, calls)
		}
	}
	e.handle(e.closedEvent(first, "alice", false)) // nothing left: no-op
	if got := e.botComments(); len(got) != 0 {
		t.Errorf("closing posted comments: %q", got)
	}

	// Reopened, the pull request runs again; closing it stops that run too.
	e.handleRetrying(e.prEvent("reopened", first))
	ci8b, lint8b := e.newRun("ci", 2), e.newRun("lint", 2)
	e.waitNode(ci8b.RunID, "wait")
	e.handle(e.closedEvent(first, "alice", false))
	for _, r := range []ReportTarget{ci8b, lint8b} {
		calls := e.reps.waitEnd(t, r.RunID)
		if got := calls[len(calls)-1]; !strings.Contains(got, "pull request closed") {
			t.Errorf("reopened run %s: last call %q, want a cancel for the closed pull request", r.Pipeline, got)
		}
	}
	e.waitRevoked()
}

// TestServerClosedUnknown: a closed delivery for a repository, pull request
// or installation the bot never ran anything for does nothing, quietly,
// and is not retried.
func TestServerClosedUnknown(t *testing.T) {
	e := newServerEnv(t)
	p := ghapptest.Pull{Number: 41, HeadSHA: strings.Repeat("a", 40), Author: "alice"}

	known := e.closedEvent(p, "alice", false) // octo/widgets, but no pull request 41
	stranger := known
	stranger.Repo = Repo{Owner: "nobody", Name: "else", FullName: "nobody/else",
		CloneURL: e.gh.CloneURL("nobody", "else"), DefaultBranch: "main"}
	uninstalled := stranger
	uninstalled.InstallationID = 987654321
	merged := uninstalled
	merged.PR.Merged = true
	before := len(e.gh.Requests())
	for _, ev := range []Event{known, stranger, uninstalled, merged} {
		e.handle(ev)
	}
	if got := e.reps.list(); len(got) != 0 {
		t.Errorf("closed deliveries made %d reporters, want none", len(got))
	}
	if got := e.botComments(); len(got) != 0 {
		t.Errorf("closed deliveries posted comments: %q", got)
	}
	for _, r := range e.gh.Requests()[before:] {
		t.Errorf("a closed delivery with nothing to cancel called GitHub: %s %s", r.Method, r.Path)
	}
}

// TestServerPullRequestClosedWhileDeciding: a pull request that GitHub
// shows closed by the time its opened event is decided gets no run (its
// close, decided first, had nothing to cancel yet).
func TestServerPullRequestClosedWhileDeciding(t *testing.T) {
	e := newServerEnv(t)
	e.seed(map[string]string{".kilroy/ci.dot": ciPipeline})
	e.gh.SetPermission("octo", "widgets", "alice", "write")
	pr := e.openPR(1, "alice", map[string]string{"README.md": "hi\n"})
	closed := pr
	closed.State = "closed"
	e.gh.PutPull("octo", "widgets", closed)

	e.handle(e.prEvent("opened", pr))
	if got := e.reps.list(); len(got) != 0 {
		t.Errorf("a pull request closed while deciding got %d reporters, want none", len(got))
	}

	// Reopened, the same head runs.
	e.gh.PutPull("octo", "widgets", pr)
	e.handle(e.prEvent("reopened", pr))
	if run := e.newRun("ci", 0); run.HeadSHA != pr.HeadSHA {
		t.Fatalf("run after reopening = %+v, want head %s", run, pr.HeadSHA)
	}
}

// TestServerCommandRunTrustedUsesHead: a writer's `/kilroy run` on a
// trusted pull request runs the pipeline as the pull request changed it,
// as its push did, without a note about `.kilroy/` changes.
func TestServerCommandRunTrustedUsesHead(t *testing.T) {
	e := newServerEnv(t)
	e.seed(map[string]string{".kilroy/ci.dot": ciPipeline})
	e.gh.SetPermission("octo", "widgets", "alice", "write")
	edited := strings.Replace(ciPipeline, "env > env.txt", "env > env.txt && echo edited > edited.txt", 1)
	pr := e.openPR(3, "alice", map[string]string{".kilroy/ci.dot": edited})

	e.handle(e.commentEvent(3, "alice", Command{Verb: VerbRun}))
	run := e.newRun("ci", 0)
	if run.HeadSHA != pr.HeadSHA || len(run.Notes) != 0 {
		t.Fatalf("run target = %+v, want the head %s and no note", run, pr.HeadSHA)
	}
	e.reps.waitEnd(t, run.RunID)
	files := e.repo.Git(t, "ls-tree", "-r", "--name-only", "kilroy/run/ci/"+run.RunID)
	if !strings.Contains(files, "edited.txt") {
		t.Errorf("run branch files:\n%s\nwant edited.txt from the pull request's own pipeline", files)
	}
	e.waitRevoked()
}

// TestServerRunFailingBeforeACheckpointPushesNoBranch: a run that fails
// before its first checkpoint (here its agent cannot be built) completes
// its checks failed and leaves no run branch on GitHub: the branch would
// only repeat the pull request's head.
func TestServerRunFailingBeforeACheckpointPushesNoBranch(t *testing.T) {
	e := newServerEnvWith(t, func(o *ServerOptions) {
		o.NewAgent = func(map[string]string, string, string, *sandbox.Sandbox) (attractor.Agent, error) {
			return nil, errors.New("agent configuration unreadable")
		}
	})
	e.seed(map[string]string{".kilroy/ci.dot": ciPipeline})
	e.gh.SetPermission("octo", "widgets", "alice", "write")
	pr := e.openPR(4, "alice", map[string]string{"README.md": "hi\n"})

	e.handle(e.prEvent("opened", pr))
	run := e.newRun("ci", 0)
	calls := e.reps.waitEnd(t, run.RunID)
	if last := calls[len(calls)-1]; !strings.HasPrefix(last, "fail ") && !strings.HasPrefix(last, "close") {
		t.Errorf("reporter calls = %q, want the run to end failed", calls)
	}
	if refs := e.repo.Git(t, "for-each-ref", "--format=%(refname)", "refs/heads/kilroy/"); refs != "" {
		t.Errorf("run branches on GitHub after a run with no checkpoint:\n%s", refs)
	}
	e.waitRevoked()
}
