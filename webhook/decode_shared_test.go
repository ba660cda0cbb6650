package webhook

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Values of the real payloads in the shared test data.
var (
	helloWorld = Repo{
		ID: 186853002, Owner: "Codertocat", Name: "Hello-World", FullName: "Codertocat/Hello-World",
		CloneURL: "https://github.com/Codertocat/Hello-World.git", DefaultBranch: "master",
	}
	codertocat = Actor{ID: 21031067, Login: "Codertocat", Type: "User"}
	helloPR    = PullRequest{
		Number: 2, HeadSHA: "ec26c3e57ca3a959ca5aad62de7213c562f8c821", HeadRef: "changes",
		HeadRepoFullName: "Codertocat/Hello-World", BaseRef: "master",
		BaseSHA: "f95f852bd8fca8fcc58a9a2d6c842781e32a215e", AuthorLogin: "Codertocat",
	}
)

// sharedCase is one real (or edited real) payload sent through the handler.
type sharedCase struct {
	name  string
	event string
	body  func(t *testing.T) []byte
	// want is the Event the sink must receive; nil means the delivery is
	// ignored with a reason containing wantReason.
	want       *Event
	wantReason string
}

// file returns a payload read in place, to be signed over its exact bytes.
func file(name string) func(t *testing.T) []byte {
	return func(t *testing.T) []byte { return sharedPayload(t, name) }
}

// edited returns a copy of a real payload changed by change. The shared data
// has no comment on a pull request, no fork pull request and no requested
// action of ours, so those cases are edited copies; the copy is re-serialised
// and signed over its new bytes.
func edited(name string, change func(t *testing.T, m map[string]any)) func(t *testing.T) []byte {
	return func(t *testing.T) []byte {
		return edit(t, sharedPayload(t, name), func(m map[string]any) { change(t, m) })
	}
}

// onPullRequest makes an issue_comment payload's issue a pull request and
// sets the comment's body.
func onPullRequest(body string) func(t *testing.T, m map[string]any) {
	return func(t *testing.T, m map[string]any) {
		obj(t, m, "issue")["pull_request"] = map[string]any{
			"url": "https://api.github.com/repos/Codertocat/Hello-World/pulls/1",
		}
		obj(t, m, "comment")["body"] = body
	}
}

func TestSharedPayloads(t *testing.T) {
	sharedWebhooks(t) // skip early, with the reason, when the data is absent
	fork := helloPR
	fork.Fork, fork.HeadRepoFullName = true, "mallory/Hello-World"
	prComment := Event{
		Kind: KindCommentCommand, Action: "created", InstallationID: 1, Repo: helloWorld,
		PR: PullRequest{Number: 1, AuthorLogin: "Codertocat"}, Sender: codertocat,
		Command: Command{Verb: VerbRun, Pipelines: []string{"ci"}}, CommentID: 492700400,
		CommentedAt: time.Date(2019, 5, 15, 15, 20, 21, 0, time.UTC), // the example's comment.created_at
	}
	prEvent := func(action string, pr PullRequest) *Event {
		return &Event{Kind: KindPullRequest, Action: action, InstallationID: 1, Repo: helloWorld, PR: pr, Sender: codertocat}
	}
	tests := []sharedCase{
		{name: "pull request opened", event: "pull_request", body: file("pull_request/opened.payload.json"), want: prEvent("opened", helloPR)},
		{name: "pull request opened, null body", event: "pull_request", body: file("pull_request/opened.with-null-body.json"), want: prEvent("opened", helloPR)},
		{name: "pull request synchronize", event: "pull_request", body: file("pull_request/synchronize.payload.json"), want: prEvent("synchronize", helloPR)},
		{name: "pull request reopened", event: "pull_request", body: file("pull_request/reopened.payload.json"), want: prEvent("reopened", helloPR)},
		{name: "pull request ready for review", event: "pull_request", body: file("pull_request/ready_for_review.with-installation.payload.json"), want: prEvent("ready_for_review", helloPR)},
		{
			name: "fork pull request (edited copy)", event: "pull_request",
			body: edited("pull_request/opened.payload.json", func(t *testing.T, m map[string]any) {
				head := obj(t, m, "pull_request", "head", "repo")
				head["id"], head["full_name"], head["fork"] = 999, "mallory/Hello-World", true
				obj(t, head, "owner")["login"] = "mallory"
			}),
			want: prEvent("opened", fork),
		},
		{
			name: "draft pull request passes through (edited copy)", event: "pull_request",
			body: edited("pull_request/opened.payload.json", func(t *testing.T, m map[string]any) {
				obj(t, m, "pull_request")["draft"] = true
			}),
			want: prEvent("opened", func() PullRequest { pr := helloPR; pr.Draft = true; return pr }()),
		},
		{
			name: "pull request closed", event: "pull_request", body: file("pull_request/closed.payload.json"),
			want: &Event{Kind: KindCancel, Action: "closed", InstallationID: 1, Repo: helloWorld, PR: helloPR, Sender: codertocat},
		},
		{
			name: "pull request merged (edited copy)", event: "pull_request",
			body: edited("pull_request/closed.payload.json", func(t *testing.T, m map[string]any) {
				obj(t, m, "pull_request")["merged"] = true
			}),
			want: &Event{Kind: KindCancel, Action: "closed", InstallationID: 1, Repo: helloWorld,
				PR: func() PullRequest { pr := helloPR; pr.Merged = true; return pr }(), Sender: codertocat},
		},
		{name: "pull request labeled", event: "pull_request", body: edited("pull_request/opened.payload.json", func(t *testing.T, m map[string]any) {
			m["action"] = "labeled"
		}), wantReason: `action "labeled"`},
		{name: "pull request converted to draft", event: "pull_request", body: file("pull_request/converted_to_draft.with-installation.payload.json"), wantReason: `action "converted_to_draft"`},
		{
			name: "command on a pull request (edited copy)", event: "issue_comment",
			body: edited("issue_comment/created.with-installation.payload.json", onPullRequest("/kilroy run ci\nThanks!")),
			want: &prComment,
		},
		{
			name: "plain comment on a pull request (edited copy)", event: "issue_comment",
			body:       edited("issue_comment/created.with-installation.payload.json", onPullRequest("LGTM\n/kilroy run ci")),
			wantReason: "does not start with a /kilroy command",
		},
		{
			name: "command by a bot (edited copy)", event: "issue_comment",
			body: edited("issue_comment/created.with-installation.payload.json", func(t *testing.T, m map[string]any) {
				onPullRequest("/kilroy run ci")(t, m)
				sender := obj(t, m, "sender")
				sender["login"], sender["type"] = "octocoders-linter[bot]", "Bot"
			}),
			wantReason: "bot",
		},
		{name: "comment on an issue", event: "issue_comment", body: file("issue_comment/created.with-installation.payload.json"), wantReason: "not a pull request"},
		{name: "comment edited", event: "issue_comment", body: file("issue_comment/edited.payload.json"), wantReason: `action "edited"`},
		{
			name: "check run re-run", event: "check_run", body: file("check_run/rerequested.payload.json"),
			want: &Event{
				Kind: KindRerun, Action: "rerequested", InstallationID: 1,
				Repo: Repo{
					ID: 526, Owner: "github", Name: "hello-world", FullName: "github/hello-world",
					CloneURL: "http://github.com/github/hello-world.git", DefaultBranch: "master",
				},
				Sender:     Actor{ID: 5346, Login: "octocat", Type: "User"},
				CheckRun:   CheckRun{ID: 4, Name: "randscape", HeadSHA: "d6fde92930d4715a2b49857d24b940956b26d2d3"},
				CheckSuite: CheckSuite{ID: 5, HeadSHA: "d6fde92930d4715a2b49857d24b940956b26d2d3"},
			},
		},
		{name: "another app's requested action", event: "check_run", body: file("check_run/requested_action.payload.json"), wantReason: `"lgtm|26764" is not one of kilroy's`},
		{
			name: "cancel button (edited copy)", event: "check_run",
			body: edited("check_run/requested_action.payload.json", func(t *testing.T, m map[string]any) {
				obj(t, m, "requested_action")["identifier"] = "cancel"
			}),
			want: &Event{
				Kind: KindCancel, Action: "requested_action", InstallationID: 690857,
				Repo: Repo{
					ID: 9384267, Owner: "electron", Name: "electron", FullName: "electron/electron",
					CloneURL: "https://github.com/electron/electron.git", DefaultBranch: "master",
				},
				Sender: Actor{ID: 2036040, Login: "codebytere", Type: "User"},
				CheckRun: CheckRun{
					ID: 1494503112, Name: "API Review", HeadSHA: "5bd5f196a46b8222fb7484f05faba41a73cf34bd",
					RequestedAction: "cancel",
				},
				CheckSuite:  CheckSuite{ID: 1604239627, HeadSHA: "5bd5f196a46b8222fb7484f05faba41a73cf34bd"},
				PullNumbers: []int{26764},
			},
		},
		{name: "check run created", event: "check_run", body: file("check_run/created.payload.json"), wantReason: `action "created"`},
		{name: "check run completed", event: "check_run", body: file("check_run/completed.payload.json"), wantReason: `action "completed"`},
		{
			name: "check suite re-run", event: "check_suite", body: file("check_suite/rerequested.payload.json"),
			want: &Event{
				Kind: KindRerun, Action: "rerequested", InstallationID: 957387, Repo: helloWorld,
				Sender:      Actor{ID: 49795351, Login: "octocoders-linter[bot]", Type: "Bot"},
				CheckSuite:  CheckSuite{ID: 118578147, HeadSHA: "ec26c3e57ca3a959ca5aad62de7213c562f8c821"},
				PullNumbers: []int{2},
			},
		},
		{name: "check suite requested", event: "check_suite", body: file("check_suite/requested.payload.json"), wantReason: `action "requested"`},
		{
			name: "installation created", event: "installation", body: file("installation/created.payload.json"),
			want: &Event{
				Kind: KindInstallation, Action: "created", InstallationID: 957387, Sender: codertocat,
				Installation: InstallationChange{Account: "Codertocat", AppID: 29310, Added: []string{"Codertocat/Hello-World"}},
			},
		},
		{
			name: "installation deleted", event: "installation", body: file("installation/deleted.payload.json"),
			want: &Event{
				Kind: KindInstallation, Action: "deleted", InstallationID: 2, Sender: Actor{ID: 1, Login: "octocat", Type: "User"},
				Installation: InstallationChange{Account: "octocat", AppID: 5725, Removed: []string{"octocat/Hello-World"}},
			},
		},
		{
			name: "repositories added", event: "installation_repositories", body: file("installation_repositories/added.payload.json"),
			want: &Event{
				Kind: KindInstallation, Action: "added", InstallationID: 957387, Sender: codertocat,
				Installation: InstallationChange{Account: "Codertocat", AppID: 29310, Added: []string{"Codertocat/Space"}},
			},
		},
		{
			name: "ping", event: "ping", body: file("ping/with-app_id.payload.json"),
			want: &Event{
				Kind: KindPing, Sender: codertocat,
				Repo: Repo{
					ID: 186853261, Owner: "Octocoders", Name: "Hello-World", FullName: "Octocoders/Hello-World",
					CloneURL: "https://github.com/Octocoders/Hello-World.git", DefaultBranch: "master",
				},
			},
		},
		{name: "push", event: "push", body: file("push/with-installation.payload.json"), wantReason: `event "push" is not handled`},
	}
	runDeliveries(t, Config{}, tests)
}

// runDeliveries sends each case through a handler configured with cfg and
// checks the answer and what reached the sink.
func runDeliveries(t *testing.T, cfg Config, tests []sharedCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := &fakeSink{}
			h := newHandler(t, cfg, sink)
			code, rep := serve(t, h, delivery(tt.event, "d-"+tt.event, tt.body(t)))
			calls := sink.recorded()
			if tt.want == nil {
				if code != http.StatusOK || rep.Status != "ignored" || !strings.Contains(rep.Reason, tt.wantReason) {
					t.Errorf("answer %d %+v, want 200 ignored with %q", code, rep, tt.wantReason)
				}
				if len(calls) != 0 {
					t.Errorf("ignored delivery reached the sink: %+v", calls[0].ev)
				}
				return
			}
			if code != http.StatusAccepted || rep.Status != "queued" || rep.Kind != tt.want.Kind {
				t.Errorf("answer %d %+v, want 202 queued %s", code, rep, tt.want.Kind)
			}
			if len(calls) != 1 {
				t.Fatalf("sink called %d times, want 1", len(calls))
			}
			if diff := cmp.Diff(calls[0].ev, *tt.want); diff != "" {
				t.Errorf("event (-got +want):\n%s", diff)
			}
		})
	}
}

// TestSharedCheckOfAnotherApp: with our App id configured, re-run buttons of
// another App's check runs and suites are not ours to handle.
func TestSharedCheckOfAnotherApp(t *testing.T) {
	sharedWebhooks(t)
	runDeliveries(t, Config{AppID: 12345}, []sharedCase{
		{name: "check run", event: "check_run", body: file("check_run/rerequested.payload.json"), wantReason: "another app"},
		{name: "check suite", event: "check_suite", body: file("check_suite/rerequested.payload.json"), wantReason: "another app"},
	})
}
