package main

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
)

// artifactDOT is a pipeline whose one node leaves an 8 MiB file of random
// bytes, which its checkpoint commits to the run branch.
const artifactDOT = `digraph ci {
  start [shape=Mdiamond]
  build [shape=parallelogram, tool_command="head -c 8388608 /dev/urandom > artifact.bin"]
  done [shape=Msquare]
  start -> build -> done
}
`

const artifactBytes = 8 << 20

// dataDirOf lists what the data dir holds of octo: run directories,
// worktrees parked in the pool (octo's is the only repository) and
// mirrors under mirrors/octo/.
func (e *e2e) dataDirOf() []string {
	var out []string
	dir := e.cfg.DataDir
	for _, sub := range []string{"runs", "pool"} {
		entries, _ := os.ReadDir(filepath.Join(dir, sub))
		for _, r := range entries {
			out = append(out, sub+"/"+r.Name())
		}
	}
	mirrors, _ := filepath.Glob(filepath.Join(dir, "mirrors", e2eOwner, "*"))
	for _, m := range mirrors {
		rel, _ := filepath.Rel(dir, m)
		out = append(out, rel)
	}
	return out
}

// mirrorRunBranches are the run branches in octo/widgets' mirror.
func (e *e2e) mirrorRunBranches() string {
	mirror := filepath.Join(e.cfg.DataDir, "mirrors", e2eOwner, e2eName+".git")
	if _, err := os.Stat(mirror); err != nil {
		return ""
	}
	return gitOut(e.t, mirror, "for-each-ref", "--format=%(refname)", "refs/heads/kilroy/run/")
}

func treeBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// TestServeE2ERetention: with a tiny retention window and remote run
// branches opted in, the sweep serve runs in the background removes a
// finished run's directory, its branch in the mirror and on GitHub, and
// the mirror's copy of the 8 MiB artifact the run committed.
func TestServeE2ERetention(t *testing.T) {
	e := newE2E(t, e2eOptions{
		files:  map[string]string{"main.go": mainGo, ".kilroy/ci.dot": artifactDOT},
		policy: "retention: {runs: 1s, branches: 1s, remote_branches: 1s, every: 1s}\n",
	})
	sha := e.repo.Commit(t, "feature-1", map[string]string{"README.md": "change\n"}, "change")
	e.deliver("pull_request", e.openPR("opened", pr{number: 1, sha: sha}))
	sum := e.waitSettled(sha, "kilroy/ci")[0]
	if sum.Conclusion != "success" {
		t.Fatalf("kilroy/ci = %s, want success:\n%s", sum.Conclusion, e.describeChecks())
	}
	id := runID(sum)
	e.waitIdle()
	e.waitFor("the run's directory and branches swept", func() bool {
		return len(e.dataDirOf()) == 1 && e.mirrorRunBranches() == "" &&
			e.repo.Git(t, "for-each-ref", "refs/heads/kilroy/run/") == ""
	})
	if !strings.Contains(e.logs.String(), "kilroy/run/ci/"+id) {
		t.Errorf("the sweep's log does not name the run branch kilroy/run/ci/%s:\n%s", id, e.logs.String())
	}
	mirror := filepath.Join(e.cfg.DataDir, "mirrors", e2eOwner, e2eName+".git")
	e.waitFor("the artifact's objects collected from the mirror", func() bool { return treeBytes(mirror) < artifactBytes })
	t.Logf("mirror after the sweep: %d bytes (the run committed %d)", treeBytes(mirror), artifactBytes)
}

// uninstallPayload is an uninstall delivery from source (the shared
// fixtures or this package's testdata), edited to name the fake's octo,
// its installation and the App.
func (e *e2e) uninstallPayload(raw []byte, installation int64) []byte {
	var p jsonObject
	if err := json.Unmarshal(raw, &p); err != nil {
		e.t.Fatal(err)
	}
	p.set("installation", jsonObject{"id": installation, "app_id": e.gh.AppID(),
		"account": jsonObject{"login": e2eOwner, "type": "Organization"}})
	repos := []any{jsonObject{"id": e2eRepoID, "name": e2eName, "full_name": e2eRepo}}
	for _, key := range []string{"repositories", "repositories_removed"} {
		if _, ok := p[key]; ok {
			p.set(key, repos)
		}
	}
	b, err := json.Marshal(p)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

// TestServeE2EUninstall: after installation.deleted (or the repository
// removed from the installation) nothing of the repository remains in the
// data dir: not the finished run's directory, not the directory of the
// run that was still going (cancelled first), not the mirror.
func TestServeE2EUninstall(t *testing.T) {
	own := func(name string) func(*testing.T) []byte {
		return func(t *testing.T) []byte {
			b, err := os.ReadFile(filepath.Join("testdata", "webhooks", name))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	tests := []struct {
		name, event string
		raw         func(*testing.T) []byte
	}{
		{name: "installation deleted", event: "installation", raw: own("installation-deleted.json")},
		{name: "repository removed", event: "installation_repositories", raw: own("installation_repositories-removed.json")},
		{name: "installation deleted, GitHub's payload", event: "installation",
			raw: func(t *testing.T) []byte { return ghapptest.LoadPayload(t, "installation/deleted.payload.json") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := tt.raw(t) // skips here when the shared fixtures are absent
			gate := newGate(t)
			e := newE2E(t, e2eOptions{files: map[string]string{"main.go": mainGo, ".kilroy/ci.dot": ciDOT(gatedVet(gate))}})
			done := e.repo.Commit(t, "feature-1", map[string]string{"README.md": "one\n"}, "one")
			touch(t, gate)
			e.deliver("pull_request", e.openPR("opened", pr{number: 1, sha: done}))
			e.waitSettled(done, "kilroy/ci", "kilroy/ci/vet")
			if err := os.Remove(gate); err != nil {
				t.Fatal(err)
			}
			going := e.repo.Commit(t, "feature-2", map[string]string{"README.md": "two\n"}, "two")
			e.deliver("pull_request", e.openPR("opened", pr{number: 2, sha: going}))
			e.waitNode(going, "vet")
			got := e.dataDirOf()
			if n := len(slices.DeleteFunc(slices.Clone(got), func(p string) bool { return strings.HasPrefix(p, "pool/") })); n != 3 {
				t.Fatalf("data dir before the uninstall: %v; want two runs and the mirror", got)
			}

			installation := e.gh.InstallationID(e2eOwner)
			if tt.event == "installation" {
				e.gh.Uninstall(e2eOwner)
			}
			e.deliver(tt.event, e.uninstallPayload(raw, installation))
			e.waitFor("nothing of octo/widgets left in the data dir", func() bool { return len(e.dataDirOf()) == 0 })
			// Uninstalled, the runs' tokens cannot be revoked (waitIdle): the
			// queue being empty is what says every handler returned.
			e.waitFor("no run queued or running", func() bool {
				code, metrics := e.get("/metrics")
				return code == http.StatusOK && strings.Contains(metrics, "\nkilroy_queue_depth 0\n")
			})
		})
	}
}

// gitOut runs git on the bare repository dir and returns its output.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"--git-dir", dir}, args...)...).Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}
