package main

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
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

// TestServeE2EApprovalPrefix: `/kilroy run PREFIX` approves the commit the
// prefix named when the comment was written, not a later push that shares
// it. A fork's author grinds a malicious commit with the same seven hex
// digits as the reviewed one and pushes it after a writer's comment but
// before the bot reads it: nothing runs, and the reply names both. A
// prefix both commits share is then refused as ambiguous.
func TestServeE2EApprovalPrefix(t *testing.T) {
	e := newE2E(t, e2eOptions{})
	fork := e.gh.AddRepo("mallory", e2eName)
	benign, malicious := grindSamePrefix(t, fork, 7)
	fork.Git(t, "update-ref", "refs/heads/main", benign)
	e.deliver("pull_request", e.openPR("opened", pr{number: 8, sha: benign, author: "mallory", fork: "mallory/widgets"}))
	e.waitSettled(benign, "kilroy/ci")

	approval := e.comment(8, "carol", "/kilroy run "+benign[:7])
	fork.Git(t, "update-ref", "refs/heads/main", malicious)
	e.deliver("pull_request", e.openPR("synchronize", pr{number: 8, sha: malicious, author: "mallory", fork: "mallory/widgets"}))
	e.waitSettled(malicious, "kilroy/ci")
	e.deliver("issue_comment", approval)
	e.waitFor("the bot's reply to the approval, or a run", func() bool {
		return len(e.botComments()) > 0 || len(e.named(malicious, "kilroy/ci")) > 1
	})
	if n := len(e.named(malicious, "kilroy/ci")); n != 1 {
		t.Fatalf("the commit pushed after the comment ran on its prefix: %s", e.describeChecks())
	}
	if reply := e.botComments()[0]; !strings.Contains(reply, "Nothing ran") || !strings.Contains(reply, benign) || !strings.Contains(reply, malicious) {
		t.Errorf("reply = %q, want nothing ran, naming %s and %s", reply, benign, malicious)
	}

	e.deliver("issue_comment", e.comment(8, "carol", "/kilroy run "+benign[:7]))
	e.waitFor("the bot's reply to the ambiguous prefix", func() bool { return len(e.botComments()) > 1 })
	if reply := e.botComments()[1]; !strings.Contains(reply, "more than one commit") || !strings.Contains(reply, "/kilroy run "+malicious+"`") {
		t.Errorf("reply = %q, want the prefix refused as ambiguous, asking for the full SHA", reply)
	}
	if n := len(e.named(malicious, "kilroy/ci")); n != 1 {
		t.Errorf("an ambiguous prefix ran: %s", e.describeChecks())
	}
	e.waitIdle()
	e.assertAllCompleted()
}

// grindSamePrefix writes two commits into repo, one changing main.go
// harmlessly and one adding a line to it, whose ids share their first n
// hex digits: a birthday search over their messages, as an attacker
// would run it (n = 7 takes tens of thousands of hashes). Neither is on a
// branch.
func grindSamePrefix(t *testing.T, repo *ghapptest.Repo, n int) (benign, malicious string) {
	t.Helper()
	good := repo.Commit(t, "grind-good", map[string]string{"main.go": mainGo + "// reviewed\n"}, "reviewed")
	bad := repo.Commit(t, "grind-bad", map[string]string{"main.go": mainGo + "// reviewed\nfunc init() { println(\"pwned\") }\n"}, "bad")
	raw := repo.Git(t, "cat-file", "commit", good)
	header, _, _ := strings.Cut(raw, "\n\n")
	_, rest, _ := strings.Cut(header, "\n") // drop the tree line
	body := func(tree string, msg string) []byte {
		return []byte("tree " + tree + "\n" + rest + "\n\n" + msg + "\n")
	}
	id := func(b []byte) string {
		h := sha1.New()
		fmt.Fprintf(h, "commit %d\x00", len(b))
		h.Write(b)
		return hex.EncodeToString(h.Sum(nil))
	}
	goodTree, badTree := repo.Git(t, "rev-parse", good+"^{tree}"), repo.Git(t, "rev-parse", bad+"^{tree}")
	seenGood, seenBad := map[string][]byte{}, map[string][]byte{}
	var gb, bb []byte
	for i := 0; gb == nil; i++ {
		g, b := body(goodTree, fmt.Sprintf("Fix the greeting (%d)", i)), body(badTree, fmt.Sprintf("Fix the greeting (%d)", i))
		gi, bi := id(g), id(b)
		seenGood[gi[:n]], seenBad[bi[:n]] = g, b
		if m, ok := seenBad[gi[:n]]; ok {
			gb, bb = g, m
		} else if m, ok := seenGood[bi[:n]]; ok {
			gb, bb = m, b
		}
	}
	write := func(b []byte) string {
		f := filepath.Join(t.TempDir(), "commit")
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
		sha := repo.Git(t, "hash-object", "-t", "commit", "-w", f)
		if sha != id(b) {
			t.Fatalf("git wrote %s, the grind computed %s", sha, id(b))
		}
		return sha
	}
	benign, malicious = write(gb), write(bb)
	t.Logf("benign %s and malicious %s share %s", benign, malicious, benign[:n])
	return benign, malicious
}
