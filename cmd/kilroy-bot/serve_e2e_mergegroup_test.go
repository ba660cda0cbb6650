package main

// The merge queue: GitHub's merge_group deliveries, sent as edited copies
// of the shared merge_group/checks_requested example (repository,
// installation, the group's SHAs and branch; octokit has no destroyed
// example, so destroyed is the same copy with action and reason set).

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
)

// fixedVet passes only when main.go says "fixed": the base branch's
// verify step, which a queued pull request cannot swap for its own.
const fixedVet = `grep -q fixed main.go || { printf 'main.go:3:5: something wrong\n'; exit 1; }`

// group commits files on top of main as the merge queue's branch of pull
// request n and returns the checks_requested (or destroyed) payload.
func (e *e2e) group(n int, files map[string]string) (sha string, payload func(action, reason string) []byte) {
	e.t.Helper()
	base := e.repo.Ref(e.t, "main")
	ref := fmt.Sprintf("gh-readonly-queue/main/pr-%d-%s", n, base)
	sha = e.repo.Commit(e.t, ref, files, fmt.Sprintf("Merge pull request #%d from octo/feature-%d", n, n))
	return sha, func(action, reason string) []byte {
		return e.payload("merge_group/checks_requested.payload.json", func(o jsonObject) {
			o.set("action", action)
			if reason != "" {
				o.set("reason", reason)
			}
			g := o.obj("merge_group")
			g.set("head_sha", sha)
			g.set("head_ref", "refs/heads/"+ref)
			g.set("base_sha", base)
			g.set("base_ref", "refs/heads/main")
		})
	}
}

// TestServeE2EMergeGroup: the merge queue gets kilroy/ci and its verify
// check on each group's head commit: success for a group whose code
// passes the base branch's pipeline, failure for one that fails it even
// though its own pull request rewrote the pipeline to pass; the summary
// names the group's pull request. A pipeline with on.merge_group false
// reports nothing there. A re-run on a group's check runs the group
// again the same way.
func TestServeE2EMergeGroup(t *testing.T) {
	e := newE2E(t, e2eOptions{files: map[string]string{"main.go": mainGo, ".kilroy/ci.dot": ciDOT(fixedVet),
		".kilroy/lint.dot":   ciDOT("exit 0"),
		".kilroy/config.yml": "version: 1\npipelines:\n  ci:\n  lint:\n    on:\n      merge_group: false\n"}})
	good, goodHook := e.group(3, map[string]string{"main.go": mainGo + "// fixed\n"})
	bad, badHook := e.group(4, map[string]string{".kilroy/ci.dot": ciDOT("exit 0")})
	e.deliver("merge_group", goodHook("checks_requested", ""))
	e.deliver("merge_group", badHook("checks_requested", ""))

	for _, tc := range []struct {
		sha, want string
		pr        int
	}{{good, "success", 3}, {bad, "failure", 4}} {
		runs := e.waitSettled(tc.sha, "kilroy/ci", "kilroy/ci/vet")
		sum, vet := e.named(tc.sha, "kilroy/ci"), e.named(tc.sha, "kilroy/ci/vet")
		if len(runs) != 2 || len(sum) != 1 || len(vet) != 1 {
			t.Fatalf("check runs on group #%d's head, want only kilroy/ci and kilroy/ci/vet:\n%s", tc.pr, e.describeChecks())
		}
		if sum[0].Conclusion != tc.want || vet[0].Conclusion != tc.want {
			t.Errorf("group #%d: kilroy/ci %s, kilroy/ci/vet %s; want %s", tc.pr, sum[0].Conclusion, vet[0].Conclusion, tc.want)
		}
		if want := fmt.Sprintf("gh-readonly-queue/main/pr-%d-", tc.pr); !strings.Contains(sum[0].Summary, want) ||
			!strings.Contains(sum[0].Summary, fmt.Sprintf("#%d", tc.pr)) {
			t.Errorf("group #%d: the summary does not name the group's branch %s… and #%d:\n%s", tc.pr, want, tc.pr, sum[0].Summary)
		}
	}
	e.waitIdle()
	for _, r := range e.gh.CheckRuns(e2eOwner, e2eName) {
		if strings.HasPrefix(r.Name, "kilroy/lint") {
			t.Errorf("%s on %.7s: a pipeline with on.merge_group false reported on a merge group", r.Name, r.HeadSHA)
		}
	}

	// Re-run on the failed group's check (an edited copy of the shared
	// check_run example: ours, on the group's commit, whose suite is on
	// the queue's branch and lists no pull request, as GitHub sends it)
	// runs the group again as the queue does: the base branch's pipeline,
	// so it fails again, although the pull request's own pipeline passes.
	sum := e.named(bad, "kilroy/ci")[0]
	e.gh.PutPull(e2eOwner, e2eName, ghapptest.Pull{Number: 4, HeadSHA: e.repo.Commit(t, "feature-4",
		map[string]string{".kilroy/ci.dot": ciDOT("exit 0")}, "pass"), Author: "alice", BaseRef: "main", Files: []string{".kilroy/ci.dot"}})
	e.deliver("check_run", e.payload("check_run/rerequested.payload.json", func(o jsonObject) {
		cr := o.obj("check_run")
		cr.set("name", sum.Name)
		cr.set("head_sha", bad)
		cr.set("external_id", sum.ExternalID)
		cr.set("app", jsonObject{"id": e.gh.AppID(), "slug": e.gh.AppSlug()})
		cr.set("pull_requests", []any{})
		cr.obj("check_suite").set("head_sha", bad)
		cr.obj("check_suite").set("head_branch", "gh-readonly-queue/main/pr-4-"+e.repo.Ref(t, "main"))
		o.set("sender", jsonObject{"login": "carol", "type": "User"})
		delete(o, "organization")
	}))
	e.waitFor("the group's re-run to complete", func() bool {
		return len(e.named(bad, "kilroy/ci")) == 2 && allCompleted(e.checkRuns(bad))
	})
	e.waitIdle()
	if again := e.named(bad, "kilroy/ci")[1]; again.Conclusion != "failure" || !strings.Contains(again.Summary, "pr-4-") {
		t.Errorf("re-run of group #4: kilroy/ci %s, want failure naming the group:\n%s", again.Conclusion, again.Summary)
	}
}

// TestServeE2EMergeGroupDestroyed: a group GitHub drops while its run is
// going has every check completed cancelled, saying why.
func TestServeE2EMergeGroupDestroyed(t *testing.T) {
	gate := newGate(t)
	e := newE2E(t, e2eOptions{files: map[string]string{"main.go": mainGo, ".kilroy/ci.dot": ciDOT(gatedVet(gate))}})
	sha, hook := e.group(5, map[string]string{"README.md": "queued\n"})
	e.deliver("merge_group", hook("checks_requested", ""))
	e.waitFor("the group's vet node to run", func() bool {
		vet := e.named(sha, "kilroy/ci/vet")
		return len(vet) == 1 && vet[0].Status == "in_progress"
	})
	e.deliver("merge_group", hook("destroyed", "dequeued"))
	runs := e.waitSettled(sha, "kilroy/ci", "kilroy/ci/vet")
	touch(t, gate)
	e.waitIdle()
	for _, r := range runs {
		if r.Conclusion != "cancelled" {
			t.Errorf("%s: %s, want cancelled", r.Name, r.Conclusion)
		}
	}
	if sum := e.named(sha, "kilroy/ci"); len(sum) != 1 || !strings.Contains(sum[0].Summary+sum[0].Title, "dequeued") {
		t.Errorf("kilroy/ci does not say the group was dequeued:\n%s", describe(sum))
	}
}

func describe(runs []*ghapptest.CheckRun) string {
	var b strings.Builder
	for _, r := range runs {
		fmt.Fprintf(&b, "%s %s/%s %q\n%s\n", r.Name, r.Status, r.Conclusion, r.Title, r.Summary)
	}
	return b.String()
}
