package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// runFiles waits for the one more kilroy/ci run of ten that a pull
// request started (the n-th), and lists the files of its run branch on
// the fake GitHub.
func (e *e2e) runFiles(ten e2eTenant, n int) []string {
	e.t.Helper()
	e.waitFor(fmt.Sprintf("run %d of %s to complete", n, ten.full()), func() bool {
		s := e.summaries(ten)
		return len(s) == n && s[n-1].Status == "completed"
	})
	e.waitIdle() // the run branch's last push
	sum := e.summaries(ten)[n-1]
	if sum.Conclusion != "success" {
		e.t.Fatalf("%s run %d: %s\n%s", ten.full(), n, sum.Conclusion, sum.Summary)
	}
	branch := "kilroy/run/ci/" + runID(sum)
	return strings.Split(ten.repo.Git(e.t, "ls-tree", "-r", "--name-only", branch), "\n")
}

// TestServeE2ECachesPerRepository (issue 23, item 2): a run of one
// installation's repository plants a module in its GOMODCACHE. Another
// installation's run does not see it; the same repository's next run does
// (its caches are kept); the host's own GOMODCACHE gets nothing. With
// sandbox.caches.scope: installation, another repository of the same
// installation sees it too, and still no other installation.
func TestServeE2ECachesPerRepository(t *testing.T) {
	for _, scope := range []string{"repository", "installation"} {
		t.Run(scope, func(t *testing.T) {
			hostCache := t.TempDir()
			t.Setenv("GOMODCACHE", hostCache) // serve reads its environment when it starts
			policy := ""
			if scope == "installation" {
				policy = "sandbox:\n  caches: {scope: installation}\n"
			}
			e := newE2E(t, e2eOptions{policy: policy,
				files: map[string]string{"main.go": mainGo, ".kilroy/ci.dot": cacheProbeDOT, "mark.txt": "widgets\n"}})
			widgets := e2eTenant{owner: e2eOwner, name: e2eName, id: e2eRepoID, repo: e.repo}
			gizmos := e.addTenant(e2eOwner, "gizmos", e2eRepoID+10, map[string]string{".kilroy/ci.dot": cacheProbeDOT, "mark.txt": "gizmos\n"})
			gadgets := e.addTenant("acme", "gadgets", 9001, map[string]string{".kilroy/ci.dot": cacheProbeDOT, "mark.txt": "gadgets\n"})
			if e.gh.InstallationID("acme") == e.gh.InstallationID(e2eOwner) {
				t.Fatal("the fake put acme and octo in one installation")
			}

			e.openTenantPR(widgets, 1)
			if got := seenPlanted(e.runFiles(widgets, 1)); len(got) != 0 {
				t.Fatalf("the first run of %s found %v in a fresh cache", e2eRepo, got)
			}
			e.openTenantPR(gadgets, 1)
			if got := seenPlanted(e.runFiles(gadgets, 1)); len(got) != 0 {
				t.Errorf("acme/gadgets, another installation, found %v planted in its module cache by %s", got, e2eRepo)
			}
			e.openTenantPR(gizmos, 1)
			wantGizmos := []string(nil)
			if scope == "installation" {
				wantGizmos = []string{"widgets"}
			}
			if got := seenPlanted(e.runFiles(gizmos, 1)); !slices.Equal(got, wantGizmos) {
				t.Errorf("octo/gizmos, of the same installation, found %v in its module cache; want %v with scope %s", got, wantGizmos, scope)
			}
			e.openTenantPR(widgets, 2)
			want := []string{"widgets"}
			if scope == "installation" {
				want = []string{"gizmos", "widgets"}
			}
			if got := seenPlanted(e.runFiles(widgets, 2)); !slices.Equal(got, want) {
				t.Errorf("the second run of %s found %v in its module cache, want %v: its cache was not kept", e2eRepo, got, want)
			}
			e.waitIdle()
			if left, _ := os.ReadDir(hostCache); len(left) > 0 {
				t.Errorf("a run wrote the host's GOMODCACHE: %v", left)
			}
			caches := filepath.Join(e.cfg.DataDir, "caches")
			if _, err := os.Stat(caches); err != nil {
				t.Errorf("no caches in the data dir: %v", err)
			}
		})
	}
}

// TestServeE2EToolchainVariableAtHostPath (issue 23, item 3): a pull
// request whose config points VIRTUAL_ENV at /proc (the sandbox bound it,
// and the node saw the host's processes) fails the kilroy/config check on
// that line; nothing runs.
func TestServeE2EToolchainVariableAtHostPath(t *testing.T) {
	e := newE2E(t, e2eOptions{})
	cfg := "version: 1\nartifact_policy:\n  env:\n    overrides:\n      python:\n        VIRTUAL_ENV: /proc\n"
	sha := e.repo.Commit(t, "feature-9", map[string]string{".kilroy/config.yml": cfg, ".kilroy/ci.dot": reachDOT}, "configure")
	e.deliver("pull_request", e.openPR("opened", pr{number: 9, sha: sha, files: []string{".kilroy/config.yml"}}))
	e.assertConfigCheck(sha, ".kilroy/config.yml", 6)
	msg := ""
	for _, a := range e.named(sha, "kilroy/config")[0].Annotations {
		msg += a.Message
	}
	if !strings.Contains(msg, "artifact_policy.env.overrides.python.VIRTUAL_ENV") || !strings.Contains(msg, "is a host path") {
		t.Errorf("kilroy/config says %q, want the key and that /proc is a host path", msg)
	}
}
