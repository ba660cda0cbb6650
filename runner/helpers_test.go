package runner

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/internal/gittest"
)

// Tests drive the real git CLI through internal/gittest: the user's
// repository is made and inspected with plain git commands (never through
// gitops, so a gitops bug cannot hide itself).

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// repoState is what a run must leave alone in the user's repository.
type repoState struct {
	Head      string
	Branches  []string // every local branch except run branches
	Status    string   // porcelain status of the working tree
	IndexHash string   // the raw index file
	Files     map[string]string
	Worktrees string
}

// snapshot records repo's state without writing to it (no index refresh).
func snapshot(t testing.TB, repo string) repoState {
	t.Helper()
	var branches []string
	for _, b := range strings.Split(gittest.Git(t, repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/"), "\n") {
		if !strings.HasPrefix(b, "refs/heads/kilroy/") {
			branches = append(branches, b)
		}
	}
	idx, err := os.ReadFile(filepath.Join(repo, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(idx)
	files := map[string]string{}
	err = filepath.WalkDir(repo, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(repo, path)
			files[filepath.ToSlash(rel)] = readFile(t, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return repoState{
		Head:      gittest.Git(t, repo, "rev-parse", "HEAD"),
		Branches:  branches,
		Status:    gittest.Git(t, repo, "--no-optional-locks", "status", "--porcelain=v1", "--untracked-files=all"),
		IndexHash: hex.EncodeToString(sum[:]),
		Files:     files,
		Worktrees: gittest.Git(t, repo, "worktree", "list", "--porcelain"),
	}
}

// runBranches lists the kilroy run branches of repo.
func runBranches(t testing.TB, repo string) []string {
	t.Helper()
	out := gittest.Git(t, repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/kilroy/")
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// treeFiles lists the files of commit rev in repo.
func treeFiles(t testing.TB, repo, rev string) []string {
	t.Helper()
	out := gittest.Git(t, repo, "ls-tree", "-r", "--name-only", rev)
	if out == "" {
		return nil
	}
	files := strings.Split(out, "\n")
	slices.Sort(files)
	return files
}

// commitMsg is one checkpoint commit: subject and trailers.
type commitMsg struct {
	Subject  string
	Trailers string
}

// branchCommits lists the commits of branch after base, oldest first.
func branchCommits(t testing.TB, repo, base, branch string) []commitMsg {
	t.Helper()
	out := gittest.Git(t, repo, "log", "--reverse", "--format=%s%x1f%(trailers:only,unfold)%x1e", base+".."+branch)
	var got []commitMsg
	for _, rec := range strings.Split(out, "\x1e") {
		rec = strings.Trim(rec, "\n")
		if rec == "" {
			continue
		}
		subj, tr, _ := strings.Cut(rec, "\x1f")
		got = append(got, commitMsg{Subject: subj, Trailers: strings.TrimSpace(tr)})
	}
	return got
}

// checkpointMsg is the commit message a checkpoint of node should have.
func checkpointMsg(runID, node, status string) commitMsg {
	return commitMsg{
		Subject:  "kilroy(" + runID + "): " + node + " (" + status + ")",
		Trailers: "Kilroy-Run: " + runID + "\nKilroy-Node: " + node + "\nKilroy-Status: " + status,
	}
}

// testEnv is a node environment with a private HOME and the test's PATH.
func testEnv(t testing.TB) EnvInputs {
	t.Helper()
	return EnvInputs{Host: map[string]string{"PATH": os.Getenv("PATH"), "HOME": t.TempDir()}}
}

// localOptions runs repo into a fresh run directory.
func localOptions(t testing.TB, repo string) LocalOptions {
	t.Helper()
	return LocalOptions{
		RepoDir: repo,
		RunDir:  filepath.Join(t.TempDir(), "run"),
		GitPath: gittest.Path(t),
		Env:     testEnv(t),
	}
}

// runLocal runs a pipeline to its end and fails the test if it could not
// start.
func runLocal(t testing.TB, o LocalOptions) (*Prepared, *attractor.RunResult) {
	t.Helper()
	p, res, err := RunLocal(context.Background(), o)
	if err != nil {
		t.Fatalf("RunLocal: %v", err)
	}
	return p, res
}

// readProgress parses progress.ndjson.
func readProgress(t testing.TB, dir RunDir) []event {
	t.Helper()
	f, err := os.Open(dir.Progress())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var evs []event
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var ev event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("progress.ndjson line %q: %v", sc.Text(), err)
		}
		evs = append(evs, ev)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return evs
}

// pipeline is a .kilroy/ci.dot with the given nodes and edges between start
// and exit.
func pipeline(body string) string {
	return "digraph ci {\n  start [shape=Mdiamond]\n  exit [shape=Msquare]\n" + body + "\n}\n"
}

// quote makes s a DOT string literal.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
