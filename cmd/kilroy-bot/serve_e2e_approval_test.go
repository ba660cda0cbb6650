package main

import (
	"strings"
	"testing"
)

// TestServeE2EApprovalRace: a writer approves a fork pull request whose
// author pushes again before the bot reads the comment. Nothing runs; the
// bot replies with the commit the comment saw and the new head. A
// `/kilroy run SHA` of the new head then runs exactly that commit.
func TestServeE2EApprovalRace(t *testing.T) {
	e := newE2E(t, e2eOptions{})
	fork := e.gh.AddRepo("mallory", e2eName)
	seen := fork.Commit(t, "main", map[string]string{"main.go": mainGo}, "reviewed change")
	e.deliver("pull_request", e.openPR("opened", pr{number: 8, sha: seen, author: "mallory", fork: "mallory/widgets"}))
	e.waitSettled(seen, "kilroy/ci")

	approval := e.comment(8, "carol", "/kilroy run")
	pushed := fork.Commit(t, "main", map[string]string{"main.go": mainGo + "// after the review\n"}, "late push")
	e.deliver("pull_request", e.openPR("synchronize", pr{number: 8, sha: pushed, author: "mallory", fork: "mallory/widgets"}))
	e.waitSettled(pushed, "kilroy/ci")
	e.deliver("issue_comment", approval)
	e.waitFor("the bot's reply to the approval, or a run", func() bool {
		return len(e.botComments()) > 0 || len(e.named(pushed, "kilroy/ci")) > 1
	})
	if n := len(e.named(pushed, "kilroy/ci")); n != 1 {
		t.Fatalf("the push after the comment was run on its approval: %s", e.describeChecks())
	}
	reply := e.botComments()[0]
	if !strings.Contains(reply, "Nothing ran") || !strings.Contains(reply, seen) || !strings.Contains(reply, pushed) {
		t.Errorf("reply = %q, want nothing ran, naming %s and %s", reply, seen, pushed)
	}

	e.deliver("issue_comment", e.comment(8, "carol", "/kilroy run "+pushed[:12]))
	e.waitFor("the run of the named commit to complete", func() bool {
		return len(e.named(pushed, "kilroy/ci")) == 2 && allCompleted(e.checkRuns(pushed))
	})
	if run := e.named(pushed, "kilroy/ci")[1]; run.Conclusion != "failure" {
		t.Errorf("approved run: %s, want failure (the base branch's vet fails)", run.Conclusion)
	}
	if n := len(e.named(seen, "kilroy/ci")); n != 1 {
		t.Errorf("%d kilroy/ci checks on the reviewed commit, want only its gate: %s", n, e.describeChecks())
	}
	e.waitIdle()
	e.assertAllCompleted()
}
