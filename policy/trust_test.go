package policy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDecide(t *testing.T) {
	tests := []struct {
		name string
		in   TrustInput
		want TrustDecision
	}{
		{"same repo writer runs from head",
			TrustInput{Request: RequestPullRequest, HeadInBaseRepo: true, AuthorPermission: "write"},
			TrustDecision{Run: true}},
		{"same repo admin runs",
			TrustInput{Request: RequestPullRequest, HeadInBaseRepo: true, AuthorPermission: "admin"},
			TrustDecision{Run: true}},
		{"maintain is write",
			TrustInput{Request: RequestPullRequest, HeadInBaseRepo: true, AuthorPermission: "maintain"},
			TrustDecision{Run: true}},
		{"fork by a writer waits",
			TrustInput{Request: RequestPullRequest, AuthorPermission: "write"},
			TrustDecision{ActionRequired: true}},
		{"same repo reader waits",
			TrustInput{Request: RequestPullRequest, HeadInBaseRepo: true, AuthorPermission: "read"},
			TrustDecision{ActionRequired: true}},
		{"triage waits",
			TrustInput{Request: RequestPullRequest, HeadInBaseRepo: true, AuthorPermission: "triage"},
			TrustDecision{ActionRequired: true}},
		{"unknown permission waits",
			TrustInput{Request: RequestPullRequest, HeadInBaseRepo: true},
			TrustDecision{ActionRequired: true}},
		{"writer's command on a fork runs from base",
			TrustInput{Request: RequestCommand, AuthorPermission: "none", Sender: "maint", SenderPermission: "write"},
			TrustDecision{Run: true, ConfigFromBase: true}},
		{"writer's command on a trusted PR runs the head's pipelines, as a push would",
			TrustInput{Request: RequestCommand, HeadInBaseRepo: true, AuthorPermission: "write", Sender: "maint", SenderPermission: "admin"},
			TrustDecision{Run: true, ConfigFromBase: false}},
		{"writer's command on a non-writer's PR in the base repo runs from base",
			TrustInput{Request: RequestCommand, HeadInBaseRepo: true, AuthorPermission: "read", Sender: "maint", SenderPermission: "admin"},
			TrustDecision{Run: true, ConfigFromBase: true}},
		{"reader's command does nothing",
			TrustInput{Request: RequestCommand, HeadInBaseRepo: true, AuthorPermission: "write", Sender: "drive-by", SenderPermission: "read"},
			TrustDecision{}},
		{"author without write cannot approve own fork",
			TrustInput{Request: RequestCommand, AuthorPermission: "none", Sender: "forker", SenderPermission: "none"},
			TrustDecision{}},
		{"rerun of a trusted PR keeps head config",
			TrustInput{Request: RequestRerun, HeadInBaseRepo: true, AuthorPermission: "write", Sender: "maint", SenderPermission: "write"},
			TrustDecision{Run: true}},
		{"rerun of a fork runs from base",
			TrustInput{Request: RequestRerun, AuthorPermission: "read", Sender: "maint", SenderPermission: "write"},
			TrustDecision{Run: true, ConfigFromBase: true}},
		{"rerun by a reader does nothing",
			TrustInput{Request: RequestRerun, HeadInBaseRepo: true, AuthorPermission: "write", Sender: "r", SenderPermission: "read"},
			TrustDecision{}},
		{"unknown request does nothing",
			TrustInput{Request: "push", HeadInBaseRepo: true, AuthorPermission: "admin", SenderPermission: "admin"},
			TrustDecision{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Decide(tt.in)
			if got.Reason == "" {
				t.Error("decision without a reason")
			}
			got.Reason = ""
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("Decide(%+v) (-got +want):\n%s", tt.in, diff)
			}
		})
	}
}
