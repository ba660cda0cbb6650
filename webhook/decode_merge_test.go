package webhook

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The merge group of the shared merge_group examples (octo-org/octo-repo).
var (
	octoRepo = Repo{
		ID: 17273051, Owner: "octo-org", Name: "octo-repo", FullName: "octo-org/octo-repo",
		CloneURL: "https://github.com/octo-org/octo-repo.git", DefaultBranch: "main",
	}
	octoGroup = MergeGroup{
		HeadSHA: "2ffea6db159f6b6c47a24e778fb9ef40cf6b1c7d",
		HeadRef: "gh-readonly-queue/main/pr-104-929f8209d40f77f4abc622a499c93a83babdbe64",
		BaseSHA: "380387fbc80638b734a49e1be1c4dfec1c01b33c", BaseRef: "main", PR: 104,
	}
)

func TestSharedMergeGroup(t *testing.T) {
	sharedWebhooks(t)
	group := func(action, reason string) *Event {
		g := octoGroup
		g.Reason = reason
		return &Event{Kind: KindMergeGroup, Action: action, InstallationID: 1, Repo: octoRepo, Sender: codertocat, MergeGroup: g}
	}
	runDeliveries(t, Config{}, []sharedCase{
		{name: "checks requested", event: "merge_group", body: file("merge_group/checks_requested.payload.json"),
			want: group("checks_requested", "")},
		{name: "checks requested, newer repository keys", event: "merge_group",
			body: file("merge_group/checks_requested.with-repository-fields.payload.json"), want: group("checks_requested", "")},
		// octokit has no destroyed example: checks_requested with the
		// action and the reason GitHub adds.
		{name: "destroyed (edited copy)", event: "merge_group",
			body: edited("merge_group/checks_requested.payload.json", func(t *testing.T, m map[string]any) {
				m["action"], m["reason"] = "destroyed", "dequeued"
			}),
			want: group("destroyed", "dequeued")},
		{name: "a branch that names no pull request (edited copy)", event: "merge_group",
			body: edited("merge_group/checks_requested.payload.json", func(t *testing.T, m map[string]any) {
				obj(t, m, "merge_group")["head_ref"] = "refs/heads/gh-readonly-queue/main/batch-7"
			}),
			want: func() *Event {
				ev := group("checks_requested", "")
				ev.MergeGroup.HeadRef, ev.MergeGroup.PR = "gh-readonly-queue/main/batch-7", 0
				return ev
			}()},
		{name: "an action of the future (edited copy)", event: "merge_group",
			body: edited("merge_group/checks_requested.payload.json", func(t *testing.T, m map[string]any) {
				m["action"] = "checks_passed"
			}),
			wantReason: `merge_group action "checks_passed" is not handled`},
	})
}

// TestSharedRerunOnGroup: a re-run button on a merge group's check keeps
// the queue's branch, which other branches are not kept for.
func TestSharedRerunOnGroup(t *testing.T) {
	sharedWebhooks(t)
	const branch = "gh-readonly-queue/master/pr-2-f95f852bd8fca8fcc58a9a2d6c842781e32a215e"
	runDeliveries(t, Config{}, []sharedCase{{
		name: "check suite re-run on a merge group (edited copy)", event: "check_suite",
		body: edited("check_suite/rerequested.payload.json", func(t *testing.T, m map[string]any) {
			obj(t, m, "check_suite")["head_branch"] = branch
		}),
		want: &Event{
			Kind: KindRerun, Action: "rerequested", InstallationID: 957387, Repo: helloWorld,
			Sender:      Actor{ID: 49795351, Login: "octocoders-linter[bot]", Type: "Bot"},
			CheckSuite:  CheckSuite{ID: 118578147, HeadSHA: "ec26c3e57ca3a959ca5aad62de7213c562f8c821", QueueBranch: branch},
			PullNumbers: []int{2},
		},
	}})
}

// TestScanMergeGroupAgrees: the scan reads the real payloads as
// encoding/json does, and leaves what it doubts to encoding/json.
func TestScanMergeGroupAgrees(t *testing.T) {
	sharedWebhooks(t)
	for _, name := range []string{"merge_group/checks_requested.payload.json",
		"merge_group/checks_requested.with-repository-fields.payload.json"} {
		payload := sharedPayload(t, name)
		var got, want mergeGroupPayload
		if !scanMergeGroup(payload, &got) {
			t.Errorf("%s: the scan left a plain payload to encoding/json", name)
		}
		if err := json.Unmarshal(payload, &want); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(got, want, allFields); diff != "" {
			t.Errorf("%s: scan vs encoding/json (-got +want):\n%s", name, diff)
		}
	}
	var p mergeGroupPayload
	if scanMergeGroup([]byte(`{"merge_group":{"head_sha":"a\u0062c"}}`), &p) {
		t.Error("the scan took a string with an escape")
	}
}

func FuzzScanMergeGroup(f *testing.F) {
	f.Add([]byte(`{"action":"checks_requested","merge_group":{"head_sha":"abc","head_ref":"refs/heads/gh-readonly-queue/main/pr-1-abc","base_ref":"refs/heads/main"},"repository":{"id":1},"reason":null}`))
	f.Add([]byte(`{"action":"destroyed","merge_group":null,"installation":{"id":2}}`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		var got, want mergeGroupPayload
		if !scanMergeGroup(payload, &got) {
			return
		}
		if err := json.Unmarshal(payload, &want); err != nil {
			t.Fatalf("scan took a payload encoding/json rejects: %v", err)
		}
		if diff := cmp.Diff(got, want, allFields); diff != "" {
			t.Errorf("scan vs encoding/json (-got +want):\n%s", diff)
		}
	})
}

// BenchmarkDecodeMergeGroup decodes the real checks_requested payload:
// one delivery per group of a merge queue.
func BenchmarkDecodeMergeGroup(b *testing.B) {
	body := sharedPayload(b, "merge_group/checks_requested.with-repository-fields.payload.json")
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := decodeMergeGroup(body); err != nil {
			b.Fatal(err)
		}
	}
}
