package main

import (
	"testing"
)

// TestServeE2EParallelBranchFailure: a pull request whose pipeline is
// docs/pipelines.md's parallel example, with unit failing, gets a red
// kilroy/ci check under wait_all; with allow_partial it is neutral, never
// success, and the verify check of unit fails either way.
func TestServeE2EParallelBranchFailure(t *testing.T) {
	for _, tc := range []struct {
		name, fanAttrs string
		want           string
	}{
		{"wait_all", `, join_policy="wait_all"`, "failure"},
		{"allow_partial", `, allow_partial=true`, "neutral"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newE2E(t, e2eOptions{files: map[string]string{
				"main.go": mainGo, ".kilroy/ci.dot": docsParallel(tc.fanAttrs, "exit 1"),
			}})
			sha := e.repo.Commit(t, "feature-par", map[string]string{"README.md": "change\n"}, "change")
			e.deliver("pull_request", e.openPR("opened", pr{number: 3, sha: sha}))
			e.waitSettled(sha, "kilroy/ci", "kilroy/ci/unit", "kilroy/ci/lint")
			e.waitIdle()
			sum, unit, lint := e.named(sha, "kilroy/ci")[0], e.named(sha, "kilroy/ci/unit")[0], e.named(sha, "kilroy/ci/lint")[0]
			if sum.Conclusion != tc.want || unit.Conclusion != "failure" || lint.Conclusion != "success" {
				t.Errorf("conclusions: kilroy/ci %s, unit %s, lint %s; want %s, failure, success\n%s",
					sum.Conclusion, unit.Conclusion, lint.Conclusion, tc.want, sum.Summary)
			}
		})
	}
}
