package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
)

// TestServeE2EInternalError: a run whose checks exist hits an internal
// error before its pipeline runs. The pull request's base branch is
// deleted after the event was decided and its run enqueued (its checks
// created, queued); when a worker takes the run, fetching the base into
// the mirror fails. Every check of that run completes: kilroy/ci as
// failure saying why, kilroy/ci/vet skipped, none left queued
// or in progress, and the reason carries no secret.
//
// With one worker, a first run held in its vet node keeps the second one
// queued for as long as the test needs: the second run starts only when
// the first is released, after the base branch is gone.
func TestServeE2EInternalError(t *testing.T) {
	gate := newGate(t)
	e := newE2E(t, e2eOptions{files: map[string]string{"main.go": mainGo, ".kilroy/ci.dot": ciDOT(gatedVet(gate))}})
	e.cfg.Workers = 1
	e.restart()
	e.repo.Git(t, "branch", "release", "main")

	busy := e.repo.Commit(t, "feature-20", map[string]string{"README.md": "busy\n"}, "busy")
	e.deliver("pull_request", e.openPR("opened", pr{number: 20, sha: busy}))
	e.waitNode(busy, "vet")

	sha := e.repo.Commit(t, "feature-21", map[string]string{"README.md": "change\n"}, "change")
	e.deliver("pull_request", e.openPR("opened", pr{number: 21, sha: sha, base: "release"}))
	// The event handler fetched the base and the head, enqueued the run
	// and created its checks: the run waits for the worker.
	e.waitFor("the queued checks of the second run", func() bool {
		return len(e.named(sha, "kilroy/ci")) == 1 && len(e.named(sha, "kilroy/ci/vet")) == 1
	})
	for _, r := range e.checkRuns(sha) {
		if r.Status != "queued" {
			t.Fatalf("%s is %s before its run started, want queued:\n%s", r.Name, r.Status, e.describeChecks())
		}
	}
	e.repo.Git(t, "update-ref", "-d", "refs/heads/release")
	touch(t, gate)

	runs := e.waitSettled(sha, "kilroy/ci", "kilroy/ci/vet")
	e.waitSettled(busy, "kilroy/ci", "kilroy/ci/vet")
	e.waitIdle()
	if len(runs) != 2 {
		t.Fatalf("check runs on the second head:\n%s\nwant kilroy/ci and kilroy/ci/vet, adopted, not made again", e.describeChecks())
	}
	sum, vet := e.named(sha, "kilroy/ci")[0], e.named(sha, "kilroy/ci/vet")[0]
	if sum.Conclusion != "failure" {
		t.Errorf("kilroy/ci: %s %q, want failure", sum.Conclusion, sum.Title)
	}
	// The summary's first line gives the reason: the git subcommand and
	// git's verdict on the deleted base branch, without the command line or
	// the server's directories.
	if !strings.Contains(sum.Summary, "**Failed**: git fetch exited 128") || !strings.Contains(sum.Title, "run failed: git fetch exited 128") {
		t.Errorf("kilroy/ci does not give the reason (the fetch into the mirror) in its title and summary:\n%s\n%s", sum.Title, sum.Summary)
	}
	if !strings.Contains(sum.Text, "Why the run failed") || !strings.Contains(sum.Text, "couldn't find remote ref refs/heads/release") {
		t.Errorf("kilroy/ci text does not give git's reason:\n%s", sum.Text)
	}
	for _, s := range []string{sum.Title, sum.Summary, sum.Text} {
		if strings.Contains(s, "mirrors/") || strings.Contains(s, "--git-dir") {
			t.Errorf("kilroy/ci shows the server's git command line or paths:\n%s", s)
		}
	}
	// The run adopts it without the graph (it failed before loading it)
	// and completes it as a node never reached.
	if vet.Conclusion != "skipped" || !strings.Contains(vet.Title, "the run failed before reaching it") {
		t.Errorf("kilroy/ci/vet: %s %q, want skipped: the run failed before reaching it", vet.Conclusion, vet.Title)
	}
	if vet.ExternalID != runID(sum)+"/vet" {
		t.Errorf("kilroy/ci/vet external_id %q, want %q", vet.ExternalID, runID(sum)+"/vet")
	}
	if !strings.Contains(e.logs.String(), "run: failed to run") {
		t.Errorf("the logs do not record the run's internal error:\n%s", e.logs.String())
	}
	e.assertAllCompleted()

	// Nothing posted about the run carries a secret: not the checks as
	// they stand, not any request that made them.
	secrets := e.secrets()
	for _, r := range runs {
		for name, s := range secrets {
			if strings.Contains(r.Title+r.Summary+r.Text, s) {
				t.Errorf("%s shows the %s", r.Name, name)
			}
		}
	}
	for _, r := range e.gh.Requests() {
		if !strings.Contains(r.Path, "/check-runs") {
			continue
		}
		for name, s := range secrets {
			if strings.Contains(r.Body, s) {
				t.Errorf("%s %s sent the %s", r.Method, r.Path, name)
			}
		}
		if tokenShape.MatchString(r.Body) {
			t.Errorf("%s %s sent something shaped like a token: %s", r.Method, r.Path, tokenShape.FindString(r.Body))
		}
	}
}

// tokenShape matches the credentials git could print: GitHub tokens and
// HTTP basic credentials.
var tokenShape = regexp.MustCompile(`gh[psuor]_[A-Za-z0-9]{20,}|github_pat_|x-access-token:`)

// secrets are the values nothing may publish: the webhook secret, a line
// of the App's key, and every token the fake issued.
func (e *e2e) secrets() map[string]string {
	out := map[string]string{"webhook secret": string(e.secret)}
	key := strings.TrimSpace(string(e.gh.PrivateKeyPEM()))
	out["App key"] = strings.Split(key, "\n")[1]
	for i, tok := range e.gh.Tokens() {
		out[fmt.Sprintf("installation token %d", i)] = tok.Value()
	}
	return out
}

// nodeRow returns the cells of node's row in a kilroy/<pipeline> node
// table (Node, Kind, Status, Attempts, Duration, Checkpoint), nil when the
// table has none.
func nodeRow(summary, node string) []string {
	for line := range strings.SplitSeq(summary, "\n") {
		if !strings.HasPrefix(line, "| `"+node+"`") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		for i, c := range cells {
			cells[i] = strings.TrimSpace(c)
		}
		return cells
	}
	return nil
}

// checkpointCommits maps the nodes of run id to their checkpoint commits
// on the run branch the fake holds.
func (e *e2e) checkpointCommits(head, id string) map[string]string {
	e.t.Helper()
	out := map[string]string{}
	log := e.repo.Git(e.t, "log", "--format=%H %s", head+"..kilroy/run/ci/"+id)
	for line := range strings.SplitSeq(log, "\n") {
		sha, subject, _ := strings.Cut(line, " ")
		// kilroy(<id>): <node> (<status>)
		rest, ok := strings.CutPrefix(subject, "kilroy("+id+"): ")
		if node, _, ok2 := strings.Cut(rest, " ("); ok && ok2 {
			if _, seen := out[node]; !seen { // newest first: the last visit
				out[node] = sha
			}
		}
	}
	return out
}

// assertPriorNodes checks that the summary of a resumed run shows each of
// nodes, finished before the interruption, with one attempt and a link to
// its checkpoint commit on the run branch.
func (e *e2e) assertPriorNodes(sum *ghapptest.CheckRun, head string, nodes ...string) {
	e.t.Helper()
	commits := e.checkpointCommits(head, runID(sum))
	for _, node := range nodes {
		row := nodeRow(sum.Summary, node)
		if len(row) != 6 {
			e.t.Errorf("kilroy/ci node table has no row for %s:\n%s", node, sum.Summary)
			continue
		}
		sha := commits[node]
		if sha == "" {
			e.t.Errorf("run branch has no checkpoint commit of %s: %v", node, commits)
			continue
		}
		attempts, checkpoint := row[3], row[5]
		if attempts != "1" {
			e.t.Errorf("%s before the interruption: attempts %q, want 1\n%s", node, attempts, sum.Summary)
		}
		if want := "[`" + sha[:7] + "`](" + e.gh.URL() + "/" + e2eRepo + "/commit/" + sha + ")"; checkpoint != want {
			e.t.Errorf("%s before the interruption: checkpoint %q, want %q\n%s", node, checkpoint, want, sum.Summary)
		}
	}
}

// TestServeE2EShutdownResumeTable: after a shutdown in the vet node and
// the restart, the kilroy/ci summary's node table still shows the nodes
// finished before the shutdown (start, build) as they ran: one attempt
// each and their checkpoint commits, not "—"; the resumed vet too. That
// holds while the resumed run goes (the first update after adoption) and
// at its end.
func TestServeE2EShutdownResumeTable(t *testing.T) {
	gate := newGate(t)
	e := newE2E(t, e2eOptions{files: map[string]string{"main.go": mainGo, ".kilroy/ci.dot": ciDOT(gatedVet(gate))}})
	e.cfg.RunDrain = 200 * time.Millisecond
	e.restart()
	sha := e.repo.Commit(t, "feature-22", map[string]string{"README.md": "change\n"}, "change")
	e.deliver("pull_request", e.openPR("opened", pr{number: 22, sha: sha}))
	id := e.waitNode(sha, "vet")
	e.stop()
	sent := len(e.named(sha, "kilroy/ci")[0].Requests)

	// The resumed run waits in vet again: the summary the restart sends
	// while it runs must already show what ran before.
	e.start()
	e.waitFor("the resumed run to update kilroy/ci", func() bool {
		return len(e.named(sha, "kilroy/ci")[0].Requests) > sent
	})
	sum := e.named(sha, "kilroy/ci")[0]
	if sum.Status != "in_progress" {
		t.Fatalf("kilroy/ci is %s while the resumed run waits in vet, want in_progress", sum.Status)
	}
	e.assertPriorNodes(sum, sha, "start", "build")
	touch(t, gate)
	runs := e.waitSettled(sha, "kilroy/ci", "kilroy/ci/vet")
	e.waitIdle()
	if len(runs) != 2 {
		t.Fatalf("check runs after the restart:\n%s\nwant the two of the first start", e.describeChecks())
	}
	sum = e.named(sha, "kilroy/ci")[0]
	if runID(sum) != id || sum.Conclusion != "failure" {
		t.Fatalf("kilroy/ci %s: %s, want failure of run %s", runID(sum), sum.Conclusion, id)
	}
	e.assertPriorNodes(sum, sha, "start", "build", "vet")
	e.assertAllCompleted()
}
