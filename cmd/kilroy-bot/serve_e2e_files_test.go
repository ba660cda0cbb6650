package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestServeE2ESpecFiles: a pull request run under serve leaves the run
// directory's checkpoint.json with the run's state, as the journal has
// it, and ends progress.ndjson with run_failed once the run branch is
// pushed and the checks are completed: whoever sees the line finds the
// last checkpoint on GitHub and the conclusion on the pull request.
func TestServeE2ESpecFiles(t *testing.T) {
	e := newE2E(t, e2eOptions{})
	sha := e.repo.Commit(t, "feature-40", map[string]string{"README.md": "change\n"}, "change")
	e.deliver("pull_request", e.openPR("opened", pr{number: 40, sha: sha}))
	var runDir string
	var last lastEvent
	var remoteTip string
	e.waitFor("progress.ndjson's terminal line", func() bool {
		runs := e.named(sha, "kilroy/ci")
		if len(runs) == 0 {
			return false
		}
		runDir = filepath.Join(e.cfg.DataDir, "runs", runID(runs[0]))
		var err error
		// Not there yet, empty, or a line being written: look again.
		if last, err = lastEventOf(runDir); err != nil || last.Type != "run_completed" && last.Type != "run_failed" {
			return false
		}
		// What the line promises, looked at as soon as it is there.
		remoteTip = e.repo.Ref(t, "refs/heads/kilroy/run/ci/"+runID(runs[0]))
		if sum := e.named(sha, "kilroy/ci")[0]; sum.Status != "completed" || sum.Conclusion != "failure" {
			t.Errorf("kilroy/ci is %s/%s when progress.ndjson ended; want completed/failure", sum.Status, sum.Conclusion)
		}
		return true
	})
	e.waitIdle()

	got := checkCheckpointJSON(t, runDir, []string{"start", "build", "vet"})
	if diff := cmp.Diff(outcomeStatuses(got), map[string]any{"start": "success", "build": "success", "vet": "fail"}); diff != "" {
		t.Errorf("node_outcomes statuses (-got +want):\n%s", diff)
	}
	if got.CurrentNode != "vet" || got.Context["last_stage"] != "vet" || got.Context["outcome"] != "fail" {
		t.Errorf("checkpoint.json current_node %q, context %v; want vet, and the context of vet's failure", got.CurrentNode, got.Context)
	}
	if remoteTip == "" || remoteTip != got.GitCommitSHA {
		t.Errorf("GitHub's run branch was at %q when progress.ndjson ended; the last checkpoint is %s", remoteTip, got.GitCommitSHA)
	}
	if last.Type != "run_failed" || last.Status != "fail" || !strings.Contains(last.Reason, "node vet failed") {
		t.Errorf("progress.ndjson's last line = %+v, want run_failed, fail, saying vet failed", last)
	}
}

// TestServeE2ESupersededEndsProgress: a run canceled by a newer push ends
// its progress.ndjson with run_failed, status canceled, saying which
// commit superseded it; its checkpoint.json shows the nodes done before.
func TestServeE2ESupersededEndsProgress(t *testing.T) {
	gate := newGate(t)
	e := newE2E(t, e2eOptions{files: map[string]string{"main.go": mainGo, ".kilroy/ci.dot": ciDOT(gatedVet(gate))}})
	old := e.repo.Commit(t, "feature-41", map[string]string{"README.md": "one\n"}, "one")
	e.deliver("pull_request", e.openPR("opened", pr{number: 41, sha: old}))
	runDir := filepath.Join(e.cfg.DataDir, "runs", e.waitNode(old, "vet"))

	head := e.repo.Commit(t, "feature-41", map[string]string{"README.md": "two\n"}, "two")
	e.deliver("pull_request", e.openPR("synchronize", pr{number: 41, sha: head}))
	e.waitSettled(old, "kilroy/ci", "kilroy/ci/vet")
	var last lastEvent
	e.waitFor("the superseded run's progress.ndjson to end", func() bool {
		var err error
		last, err = lastEventOf(runDir)
		return err == nil && (last.Type == "run_completed" || last.Type == "run_failed")
	})
	touch(t, gate)
	e.waitSettled(head, "kilroy/ci", "kilroy/ci/vet")
	e.waitIdle()
	if last.Type != "run_failed" || last.Status != "canceled" || !strings.Contains(last.Reason, "superseded by "+head) {
		t.Errorf("superseded run's last progress line = %+v, want run_failed, canceled, superseded by %s", last, head)
	}
	got := checkCheckpointJSON(t, runDir, []string{"start", "build"})
	if got.CurrentNode != "build" {
		t.Errorf("superseded run's checkpoint.json current_node = %q, want build", got.CurrentNode)
	}
}
