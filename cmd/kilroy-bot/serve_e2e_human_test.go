package main

import (
	"fmt"
	"strings"
	"testing"
)

// gateDOT waits at approve for a human: yes goes to deploy, no to skip.
const gateDOT = `digraph ci {
  start [shape=Mdiamond]
  approve [shape=hexagon, label="Deploy to staging?"]
  deploy [shape=parallelogram, tool_command="echo deployed > deployed.txt"]
  skip [shape=parallelogram, tool_command="echo skipped > skipped.txt"]
  done [shape=Msquare]
  start -> approve
  approve -> deploy [label="yes"]
  approve -> skip [label="no"]
  deploy -> done
  skip -> done
}
`

// waitBotComment waits for a bot comment containing want and returns it.
func (e *e2e) waitBotComment(want string) string {
	e.t.Helper()
	var found string
	e.waitFor("a bot comment containing "+want, func() bool {
		for _, c := range e.botComments() {
			if strings.Contains(c, want) {
				found = c
				return true
			}
		}
		return false
	})
	return found
}

// hasReaction reports whether the bot reacted with content to comment id.
func (e *e2e) hasReaction(id int64, content string) bool {
	for _, r := range e.gh.Reactions(e2eOwner, e2eName) {
		if r.CommentID == id && r.Content == content {
			return true
		}
	}
	return false
}

// TestServeE2EHumanGate: a pipeline waits at a hexagon on a pull request.
// The bot asks once on the pull request, with the command that answers;
// the summary check stays in progress meanwhile. A writer comments
// `/kilroy answer approve yes`: the comment gets eyes, and the run takes
// the yes edge (deploy, not skip) and succeeds.
func TestServeE2EHumanGate(t *testing.T) {
	e := newE2E(t, e2eOptions{files: map[string]string{"main.go": mainGo, ".kilroy/ci.dot": gateDOT}})
	sha := e.repo.Commit(t, "feature-30", map[string]string{"README.md": "change\n"}, "change")
	e.deliver("pull_request", e.openPR("opened", pr{number: 30, sha: sha}))

	id := e.waitNode(sha, "approve")
	question := e.waitBotComment("`/kilroy answer approve yes`")
	for _, want := range []string{"`ci`", id, "`approve`", "Deploy to staging?", "`/kilroy answer approve no`"} {
		if !strings.Contains(question, want) {
			t.Errorf("question comment lacks %q:\n%s", want, question)
		}
	}
	e.waitFor("kilroy/ci in progress while the run waits", func() bool {
		sum := e.named(sha, "kilroy/ci")
		return len(sum) == 1 && sum[0].Status == "in_progress"
	})

	body := e.comment(30, "carol", "/kilroy answer approve yes")
	e.deliver("issue_comment", body)
	e.waitSettled(sha, "kilroy/ci")
	e.waitIdle()
	sum := e.named(sha, "kilroy/ci")[0]
	if sum.Conclusion != "success" {
		t.Errorf("kilroy/ci concluded %s %q, want success", sum.Conclusion, sum.Title)
	}
	answer := e.gh.Comments(e2eOwner, e2eName)
	if c := answer[len(answer)-1]; c.User != "carol" || !e.hasReaction(c.ID, "eyes") {
		t.Errorf("carol's answer (%+v) has no eyes reaction: %+v", c, e.gh.Reactions(e2eOwner, e2eName))
	}
	if got := e.botComments(); len(got) != 1 {
		t.Errorf("bot comments = %q, want only the question", got)
	}

	branch := "kilroy/run/ci/" + id
	log := strings.TrimSpace(e.repo.Git(t, "log", "--format=%s", sha+".."+branch))
	var want []string
	for _, n := range []string{"done", "deploy", "approve", "start"} {
		want = append(want, fmt.Sprintf("kilroy(%s): %s (success)", id, n))
	}
	if log != strings.Join(want, "\n") {
		t.Errorf("run branch commits:\n%s\nwant the yes edge:\n%s", log, strings.Join(want, "\n"))
	}
	if tree := e.repo.Git(t, "ls-tree", "-r", "--name-only", branch); !strings.Contains(tree, "deployed.txt") || strings.Contains(tree, "skipped.txt") {
		t.Errorf("run branch tree:\n%s\nwant deployed.txt and no skipped.txt", tree)
	}
}
