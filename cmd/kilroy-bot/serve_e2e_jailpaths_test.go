package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// A served pull request's nodes see no host path (see
// TestRunNodesSeeNoHostPath for what each probe checks): not the data
// dir, the run's directory, the repository's caches under
// <data>/caches/<installation>/octo/widgets, nor the run's ID in a path.
// The verify node's finding, printed by its path in the jail, is an
// annotation on pkg/x.go line 3 of its check run, and the node after it
// fails the run with the reason its status file gives.
func TestServeE2ENodesSeeNoHostPath(t *testing.T) {
	needSandbox(t)
	srv := newProbeModel(t)
	agents, err := json.Marshal(probeAgents(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	// No sandbox.read_only: the gates' directory would be a host path
	// shown at its own place.
	policy := "sandbox:\n  read_only: []\nagents: " + string(agents) + "\n"
	e := newE2E(t, e2eOptions{policy: policy, files: map[string]string{
		"main.go": mainGo, "pkg/x.go": "package pkg\n\n// x\n", ".kilroy/ci.dot": probePipeline()}})
	e.restart() // serve reads its environment (the API key) when it starts
	sha := e.repo.Commit(t, "feature-41", map[string]string{"notes.txt": "x\n"}, "a change")
	e.deliver("pull_request", e.openPR("opened", pr{number: 41, sha: sha, files: []string{"notes.txt"}}))
	e.waitSettled(sha, "kilroy/ci", "kilroy/ci/check")
	e.waitIdle()
	sum := e.newestSummary(sha)
	if sum.Conclusion != "failure" || !strings.Contains(sum.Summary, "written in the jail") {
		t.Errorf("kilroy/ci: %s, want failure with the status file's reason:\n%s", sum.Conclusion, sum.Summary)
	}
	id := runID(sum)
	checkProbes(t, filepath.Join(e.cfg.DataDir, "runs", id, "nodes"), srv,
		[]string{filepath.Dir(e.cfg.DataDir), id + "/", e2eRepo, "/caches/", "policy-managed-roots"})
	check := e.named(sha, "kilroy/ci/check")[0]
	if len(check.Annotations) != 1 {
		t.Fatalf("kilroy/ci/check has %d annotations, want 1: %+v", len(check.Annotations), check.Annotations)
	}
	if a := check.Annotations[0]; a.Path != "pkg/x.go" || a.StartLine != 3 || !strings.Contains(a.Message, "jailed finding") {
		t.Errorf("annotation %+v, want one on pkg/x.go:3 saying jailed finding", a)
	}
}
