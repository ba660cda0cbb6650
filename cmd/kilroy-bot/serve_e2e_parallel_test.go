package main

import (
	"testing"
)

// TestServeE2EParallelBranchFailure: a pull request whose pipeline is
// docs/pipelines.md's parallel example, with unit failing (exit status,
// status file, timeout, a command that cannot start), gets a red kilroy/ci check under wait_all; with
// allow_partial or first_success it is neutral, never success, and the
// verify check of unit fails either way.
func TestServeE2EParallelBranchFailure(t *testing.T) {
	const status = `echo '{"status":"fail","failure_reason":"3 tests failed"}' > "$KILROY_STAGE_STATUS_PATH"`
	for _, tc := range []struct {
		name, fanAttrs, unitAttrs, unit string
		want, wantUnit                  string
	}{
		{"wait_all", `, join_policy="wait_all"`, "", "exit 1", "failure", "failure"},
		{"wait_all, status file", "", "", status, "failure", "failure"},
		{"wait_all, timeout", "", `, timeout="1s"`, "sleep 20", "timed_out", "timed_out"},
		{"wait_all, start failure", "", "", "true\x00", "failure", "failure"},
		{"allow_partial", `, allow_partial=true`, "", "exit 1", "neutral", "failure"},
		{"first_success", `, join_policy="first_success"`, "", status, "neutral", "failure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newE2E(t, e2eOptions{files: map[string]string{
				"main.go": mainGo, ".kilroy/ci.dot": docsParallel(tc.fanAttrs, tc.unitAttrs, tc.unit),
			}})
			sha := e.repo.Commit(t, "feature-par", map[string]string{"README.md": "change\n"}, "change")
			e.deliver("pull_request", e.openPR("opened", pr{number: 3, sha: sha}))
			e.waitSettled(sha, "kilroy/ci", "kilroy/ci/unit", "kilroy/ci/lint")
			e.waitIdle()
			sum, unit, lint := e.named(sha, "kilroy/ci")[0], e.named(sha, "kilroy/ci/unit")[0], e.named(sha, "kilroy/ci/lint")[0]
			if sum.Conclusion != tc.want || unit.Conclusion != tc.wantUnit || lint.Conclusion != "success" {
				t.Errorf("conclusions: kilroy/ci %s, unit %s, lint %s; want %s, %s, success\n%s",
					sum.Conclusion, unit.Conclusion, lint.Conclusion, tc.want, tc.wantUnit, sum.Summary)
			}
		})
	}
}
