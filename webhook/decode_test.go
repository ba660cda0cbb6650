package webhook

import (
	"bytes"
	"errors"
	"net/http"
	"testing"
	"time"
)

// Values of the hand-written fixtures under testdata/.
var (
	widgets = Repo{
		ID: 500, Owner: "acme", Name: "widgets", FullName: "acme/widgets",
		CloneURL: "https://github.com/acme/widgets.git", DefaultBranch: "main",
	}
	alice = Actor{ID: 1001, Login: "alice", Type: "User"}
)

const (
	headSHA = "1111111111111111111111111111111111111111"
	baseSHA = "2222222222222222222222222222222222222222"
)

// fixtureBody returns a case body read from testdata/.
func fixtureBody(name string) func(t *testing.T) []byte {
	return func(t *testing.T) []byte { return fixture(t, name) }
}

// TestFixtures covers every accepted kind with this package's own payloads,
// so it runs without the shared test data.
func TestFixtures(t *testing.T) {
	widgetsPR := PullRequest{
		Number: 7, HeadSHA: headSHA, HeadRef: "feature/verify", HeadRepoFullName: "acme/widgets",
		BaseRef: "main", BaseSHA: baseSHA, AuthorLogin: "alice",
	}
	tests := []sharedCase{
		{
			name: "pull request opened", event: "pull_request", body: fixtureBody("pull_request.opened.json"),
			want: &Event{Kind: KindPullRequest, Action: "opened", InstallationID: 42, Repo: widgets, PR: widgetsPR, Sender: alice},
		},
		{
			name: "draft fork pull request", event: "pull_request", body: fixtureBody("pull_request.fork.json"),
			want: &Event{
				Kind: KindPullRequest, Action: "synchronize", InstallationID: 42, Repo: widgets,
				PR: PullRequest{
					Number: 7, HeadSHA: headSHA, HeadRef: "main", HeadRepoFullName: "mallory/widgets",
					BaseRef: "main", BaseSHA: baseSHA, Draft: true, Fork: true, AuthorLogin: "mallory",
				},
				Sender: Actor{ID: 1666, Login: "mallory", Type: "User"},
			},
		},
		{
			// head.repo.fork is true, but head and base are one repository.
			name: "pull request inside a forked repository", event: "pull_request", body: fixtureBody("pull_request.same_repo_of_fork.json"),
			want: &Event{Kind: KindPullRequest, Action: "reopened", InstallationID: 42, Repo: widgets, PR: widgetsPR, Sender: alice},
		},
		{
			name: "comment command", event: "issue_comment", body: fixtureBody("issue_comment.command.json"),
			want: &Event{
				Kind: KindCommentCommand, Action: "created", InstallationID: 42, Repo: widgets,
				PR:          PullRequest{Number: 7, AuthorLogin: "alice"},
				Sender:      Actor{ID: 1002, Login: "bob", Type: "User"},
				Command:     Command{Verb: VerbRun, Pipelines: []string{"ci", "lint"}},
				CommentID:   777,
				CommentedAt: time.Date(2024, 5, 1, 12, 0, 7, 0, time.UTC),
			},
		},
		{
			name: "re-run button", event: "check_run", body: fixtureBody("check_run.requested_action.json"),
			want: &Event{
				Kind: KindRerun, Action: "requested_action", InstallationID: 42, Repo: widgets, Sender: alice,
				CheckRun: CheckRun{
					ID: 9001, Name: "kilroy/ci", HeadSHA: headSHA, ExternalID: "01J0RUN/verify", RequestedAction: "rerun",
				},
				CheckSuite:  CheckSuite{ID: 8001, HeadSHA: headSHA},
				PullNumbers: []int{7},
			},
		},
		{
			name: "re-run from failure button", event: "check_run", body: func(t *testing.T) []byte {
				return bytes.Replace(fixture(t, "check_run.requested_action.json"), []byte(`"identifier": "rerun"`), []byte(`"identifier": "rerun_failed"`), 1)
			},
			want: &Event{
				Kind: KindRerun, Action: "requested_action", InstallationID: 42, Repo: widgets, Sender: alice,
				CheckRun: CheckRun{
					ID: 9001, Name: "kilroy/ci", HeadSHA: headSHA, ExternalID: "01J0RUN/verify", RequestedAction: "rerun_failed",
				},
				CheckSuite:  CheckSuite{ID: 8001, HeadSHA: headSHA},
				PullNumbers: []int{7},
			},
		},
		{
			// A fork pull request's suite lists no pull requests.
			name: "check suite re-run", event: "check_suite", body: fixtureBody("check_suite.rerequested.json"),
			want: &Event{
				Kind: KindRerun, Action: "rerequested", InstallationID: 42, Repo: widgets, Sender: alice,
				CheckSuite: CheckSuite{ID: 8001, HeadSHA: "3333333333333333333333333333333333333333"},
			},
		},
		{
			name: "repository removed", event: "installation_repositories", body: fixtureBody("installation_repositories.removed.json"),
			want: &Event{
				Kind: KindInstallation, Action: "removed", InstallationID: 42, Sender: alice,
				Installation: InstallationChange{Account: "acme", AppID: 12345, Removed: []string{"acme/widgets"}},
			},
		},
		{
			name: "ping", event: "ping", body: fixtureBody("ping.json"),
			want: &Event{Kind: KindPing, Sender: alice},
		},
	}
	runDeliveries(t, Config{AppID: 12345, AppSlug: "kilroy-bot"}, tests)
}

// TestClosedPullRequest: a closed pull request is a cancel for it, merged
// or not; it needs its number but not its head, and other non-trigger
// actions stay ignored.
func TestClosedPullRequest(t *testing.T) {
	closed := func(change func(t *testing.T, m map[string]any)) func(t *testing.T) []byte {
		return func(t *testing.T) []byte {
			return edit(t, fixture(t, "pull_request.opened.json"), func(m map[string]any) {
				m["action"] = "closed"
				change(t, m)
			})
		}
	}
	widgetsPR := PullRequest{
		Number: 7, HeadSHA: headSHA, HeadRef: "feature/verify", HeadRepoFullName: "acme/widgets",
		BaseRef: "main", BaseSHA: baseSHA, AuthorLogin: "alice",
	}
	cancel := func(pr PullRequest) *Event {
		return &Event{Kind: KindCancel, Action: "closed", InstallationID: 42, Repo: widgets, PR: pr, Sender: alice}
	}
	merged, noHead := widgetsPR, widgetsPR
	merged.Merged = true
	noHead.HeadSHA = ""
	tests := []sharedCase{
		{
			name: "closed", event: "pull_request",
			body: closed(func(t *testing.T, m map[string]any) { obj(t, m, "pull_request")["merged"] = false }),
			want: cancel(widgetsPR),
		},
		{
			name: "merged", event: "pull_request",
			body: closed(func(t *testing.T, m map[string]any) { obj(t, m, "pull_request")["merged"] = true }),
			want: cancel(merged),
		},
		{
			name: "merged null", event: "pull_request",
			body: closed(func(t *testing.T, m map[string]any) { obj(t, m, "pull_request")["merged"] = nil }),
			want: cancel(widgetsPR),
		},
		{
			name: "closed without a head sha", event: "pull_request",
			body: closed(func(t *testing.T, m map[string]any) { delete(obj(t, m, "pull_request", "head"), "sha") }),
			want: cancel(noHead),
		},
		{
			name: "labeled", event: "pull_request", wantReason: `pull_request action "labeled" is not handled`,
			body: fixtureEdit("pull_request.opened.json", func(m map[string]any) { m["action"] = "labeled" }),
		},
		{
			name: "edited", event: "pull_request", wantReason: `pull_request action "edited" is not handled`,
			body: fixtureEdit("pull_request.opened.json", func(m map[string]any) { m["action"] = "edited" }),
		},
	}
	runDeliveries(t, Config{}, tests)

	for name, change := range map[string]func(t *testing.T, m map[string]any){
		"merged of the wrong type": func(t *testing.T, m map[string]any) { obj(t, m, "pull_request")["merged"] = "yes" },
		"no number":                func(t *testing.T, m map[string]any) { delete(obj(t, m, "pull_request"), "number") },
		"no repository":            func(t *testing.T, m map[string]any) { delete(m, "repository") },
	} {
		t.Run(name, func(t *testing.T) {
			h := newHandler(t, Config{}, &fakeSink{})
			if code, rep := serve(t, h, delivery("pull_request", "d-1", closed(change)(t))); code != http.StatusBadRequest {
				t.Errorf("answer %d %+v, want 400", code, rep)
			}
		})
	}
}

// fixtureEdit returns a case body: a testdata payload changed by change.
func fixtureEdit(name string, change func(m map[string]any)) func(t *testing.T) []byte {
	return func(t *testing.T) []byte { return edit(t, fixture(t, name), change) }
}

// TestIgnoredComments: bots, the App itself, non-commands and issues.
func TestIgnoredComments(t *testing.T) {
	comment := func(change func(t *testing.T, m map[string]any)) func(t *testing.T) []byte {
		return func(t *testing.T) []byte {
			return edit(t, fixture(t, "issue_comment.command.json"), func(m map[string]any) { change(t, m) })
		}
	}
	sender := func(login, typ string) func(t *testing.T, m map[string]any) {
		return func(t *testing.T, m map[string]any) {
			u := obj(t, m, "sender")
			u["login"], u["type"] = login, typ
		}
	}
	author := func(login, typ string) func(t *testing.T, m map[string]any) {
		return func(t *testing.T, m map[string]any) {
			u := obj(t, m, "comment", "user")
			u["login"], u["type"] = login, typ
		}
	}
	tests := []sharedCase{
		{name: "sender typed Bot", event: "issue_comment", body: comment(sender("renovate", "Bot")), wantReason: "bot"},
		{name: "sender login ends in [bot]", event: "issue_comment", body: comment(sender("dependabot[bot]", "User")), wantReason: "bot"},
		{name: "comment user is a bot", event: "issue_comment", body: comment(author("helper[bot]", "Bot")), wantReason: "bot"},
		{name: "the App itself", event: "issue_comment", body: comment(sender("kilroy-bot[bot]", "Bot")), wantReason: "bot"},
		{
			name: "posted through the App", event: "issue_comment", wantReason: "bot",
			body: comment(func(t *testing.T, m map[string]any) {
				obj(t, m, "comment")["performed_via_github_app"] = map[string]any{"id": 12345, "slug": "kilroy-bot"}
			}),
		},
		{
			name: "not a command", event: "issue_comment", wantReason: "does not start with a /kilroy command",
			body: comment(func(t *testing.T, m map[string]any) { obj(t, m, "comment")["body"] = "/kilroyrun ci" }),
		},
		{
			name: "on an issue", event: "issue_comment", wantReason: "not a pull request",
			body: comment(func(t *testing.T, m map[string]any) { delete(obj(t, m, "issue"), "pull_request") }),
		},
		{
			name: "pull_request null", event: "issue_comment", wantReason: "not a pull request",
			body: comment(func(t *testing.T, m map[string]any) { obj(t, m, "issue")["pull_request"] = nil }),
		},
		{
			name: "deleted", event: "issue_comment", wantReason: `action "deleted"`,
			body: comment(func(t *testing.T, m map[string]any) { m["action"] = "deleted" }),
		},
	}
	runDeliveries(t, Config{AppSlug: "kilroy-bot"}, tests)
}

// FuzzDecode: any verified payload of any handled event decodes to an Event,
// is ignored, or is a 400; it never panics.
func FuzzDecode(f *testing.F) {
	seeds := map[string]string{
		"pull_request":              "pull_request.opened.json",
		"issue_comment":             "issue_comment.command.json",
		"check_run":                 "check_run.requested_action.json",
		"check_suite":               "check_suite.rerequested.json",
		"installation_repositories": "installation_repositories.removed.json",
		"ping":                      "ping.json",
	}
	for event, name := range seeds {
		f.Add(event, fixture(f, name))
	}
	f.Add("installation", []byte(`{"action":"created","installation":null}`))
	f.Add("pull_request", edit(f, fixture(f, "pull_request.opened.json"), func(m map[string]any) {
		m["action"] = "closed"
		m["pull_request"].(map[string]any)["merged"] = true
	}))
	h := newHandler(f, Config{AppID: 12345, AppSlug: "kilroy-bot"}, nopSink{})
	f.Fuzz(func(t *testing.T, event string, payload []byte) {
		ev, err := h.decode(event, payload)
		if err == nil {
			if ev.Kind == "" {
				t.Fatalf("decode(%q) accepted an event without a kind", event)
			}
			return
		}
		if _, ok := errors.AsType[*ignoredError](err); ok {
			return
		}
		if code, _ := statusOf(err); code != http.StatusBadRequest {
			t.Fatalf("decode(%q) = %v, status %d; want an event, ignored or 400", event, err, code)
		}
	})
}
