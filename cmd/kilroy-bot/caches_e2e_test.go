package main

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// cacheProbeDOT is a pipeline whose one node records, in seen/ of the
// worktree (and so on the run branch), which planted module files its
// GOMODCACHE already holds, then plants its own, named after mark.txt:
// what one run leaves in its module cache for the next (issue 23, item 2).
const cacheProbeDOT = `digraph ci {
  start [shape=Mdiamond]
  probe [shape=parallelogram, tool_command="mkdir -p seen && for f in \"$GOMODCACHE\"/planted-*; do [ -e \"$f\" ] && cp \"$f\" seen/; done; echo \"$GOMODCACHE\" > seen/where.txt; echo planted > \"$GOMODCACHE/planted-$(cat mark.txt)\""]
  done [shape=Msquare]
  start -> probe -> done
}
`

// seenPlanted lists the planted files a run's probe found, from the tip
// of its run branch.
func seenPlanted(files []string) []string {
	var out []string
	for _, f := range files {
		if name, ok := strings.CutPrefix(f, "seen/planted-"); ok {
			out = append(out, name)
		}
	}
	return out
}

// lastRunFiles lists the files of the newest run branch of repo (run ids
// sort by time).
func lastRunFiles(t *testing.T, repo string) []string {
	t.Helper()
	branches := strings.Fields(gitT(t, repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/kilroy/"))
	if len(branches) == 0 {
		t.Fatalf("%s has no run branch", repo)
	}
	slices.Sort(branches)
	return strings.Split(gitT(t, repo, "ls-tree", "-r", "--name-only", branches[len(branches)-1]), "\n")
}

// TestRunCachesPerRepository: two local repositories run with one data
// dir. What the first plants in its module cache, the other's run does
// not see; the first's next run does (its caches are kept); the host's
// own GOMODCACHE gets nothing. With and without the sandbox: the cache
// variables are the same either way.
func TestRunCachesPerRepository(t *testing.T) {
	for _, mode := range []string{"sandbox", "no-sandbox"} {
		t.Run(mode, func(t *testing.T) {
			var extra []string
			if mode == "sandbox" {
				needSandbox(t)
			} else {
				extra = []string{"--no-sandbox"}
			}
			hostCache := t.TempDir()
			t.Setenv("GOMODCACHE", hostCache)
			dataDir := filepath.Join(t.TempDir(), "data")
			alpha := newRepo(t, map[string]string{".kilroy/ci.dot": cacheProbeDOT, "mark.txt": "alpha\n"})
			beta := newRepo(t, map[string]string{".kilroy/ci.dot": cacheProbeDOT, "mark.txt": "beta\n"})
			runIn := func(repo string) []string {
				t.Helper()
				code, stdout, stderr := runCmd(append([]string{"run", "--repo", repo, "--data-dir", dataDir}, extra...)...)
				if code != 0 {
					t.Fatalf("run in %s: exit %d\nstdout:\n%s\nstderr:\n%s", repo, code, stdout, stderr)
				}
				if mode == "sandbox" && strings.Contains(stderr, "without a sandbox") {
					t.Fatalf("the run was not sandboxed:\n%s", stderr)
				}
				return lastRunFiles(t, repo)
			}

			if got := seenPlanted(runIn(alpha)); len(got) != 0 {
				t.Fatalf("alpha's first run found planted files %v in a fresh cache", got)
			}
			if got := seenPlanted(runIn(beta)); len(got) != 0 {
				t.Errorf("beta's run found %v planted in its module cache by another repository's run", got)
			}
			if got := seenPlanted(runIn(alpha)); !slices.Equal(got, []string{"alpha"}) {
				t.Errorf("alpha's second run found %v in its module cache, want [alpha]: its cache was not kept", got)
			}
			if left, _ := os.ReadDir(hostCache); len(left) > 0 {
				t.Errorf("a run wrote the host's GOMODCACHE: %v", left)
			}
			// In the sandbox the node sees the caches at their fixed path;
			// either way they are under the data dir's caches/local/.
			where := gitT(t, alpha, "show", lastBranch(t, alpha)+":seen/where.txt")
			if mode == "sandbox" && where != "/kilroy/cache/gomodcache" {
				t.Errorf("alpha's GOMODCACHE in the sandbox is %s, want /kilroy/cache/gomodcache", where)
			}
			if mode != "sandbox" && !strings.HasPrefix(where, filepath.Join(dataDir, "caches", "local")+"/") {
				t.Errorf("alpha's GOMODCACHE is %s, want it under the data dir's caches/local/", where)
			}
			if planted, _ := filepath.Glob(filepath.Join(dataDir, "caches", "local", "*", "*", "cache", "gomodcache", "planted-alpha")); len(planted) != 1 {
				t.Errorf("alpha's planted module files under the data dir's caches/local/: %v, want one", planted)
			}
		})
	}
}

func lastBranch(t *testing.T, repo string) string {
	t.Helper()
	branches := strings.Fields(gitT(t, repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/kilroy/"))
	slices.Sort(branches)
	return branches[len(branches)-1]
}

// reachDOT is a pipeline whose node reports what the toolchain variables
// of the repository's config show it: the processes under VIRTUAL_ENV, the
// cgroups under NVM_DIR, a root-only file under JAVA_HOME, the socket
// under PYENV_ROOT. On a run that goes ahead, loot/ carries them to the
// run branch.
const reachDOT = `digraph ci {
  start [shape=Mdiamond]
  reach [shape=parallelogram, tool_command="mkdir -p loot; ls \"$VIRTUAL_ENV\" \"$NVM_DIR\" \"$JAVA_HOME\" \"$PYENV_ROOT\" > loot/listing.txt 2>&1; cat \"$JAVA_HOME\"/secret > loot/secret.txt 2>&1; true"]
  done [shape=Msquare]
  start -> reach -> done
}
`

// TestRunRefusesHostPathsInToolchainVariables: a repository's config that
// points a toolchain variable at a host directory (issue 23, item 3: the
// sandbox bound each such directory into the node's jail) is refused
// before anything runs, with the key, the file and line, and the fix; no
// run branch is made.
func TestRunRefusesHostPathsInToolchainVariables(t *testing.T) {
	needSandbox(t)
	rootOnly := t.TempDir() // stands in for /root: a 0700 directory with a 0600 file
	os.WriteFile(filepath.Join(rootOnly, "secret"), []byte("ROOT-ONLY-SECRET"), 0o600)
	os.Chmod(rootOnly, 0o700)
	sockets := t.TempDir() // stands in for /var/run/postgresql
	l, err := net.Listen("unix", filepath.Join(sockets, ".s.PGSQL.5432"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tests := []struct {
		profile, name, value string
	}{
		{"python", "VIRTUAL_ENV", "/proc"},
		{"node", "NVM_DIR", "/sys"},
		{"java", "JAVA_HOME", rootOnly},
		{"python", "PYENV_ROOT", sockets},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			config := "version: 1\nartifact_policy:\n  env:\n    overrides:\n      " + tt.profile + ":\n        " +
				tt.name + ": " + tt.value + "\n"
			repo := newRepo(t, map[string]string{".kilroy/ci.dot": reachDOT, ".kilroy/config.yml": config})
			code, stdout, stderr := runCmd("run", "--repo", repo, "--data-dir", filepath.Join(t.TempDir(), "data"))
			key := "artifact_policy.env.overrides." + tt.profile + "." + tt.name
			if code != 2 || !strings.Contains(stderr, ".kilroy/config.yml:6:") || !strings.Contains(stderr, key) ||
				!strings.Contains(stderr, "is a host path") || !strings.Contains(stderr, "remove the key") {
				t.Errorf("run: exit %d, want 2 with .kilroy/config.yml:6, %s and the fix\nstdout:\n%s\nstderr:\n%s",
					code, key, stdout, stderr)
			}
			if b := gitT(t, repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/kilroy/"); b != "" {
				t.Errorf("a run branch was made: %s", b)
			}
		})
	}
}
