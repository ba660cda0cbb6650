package wtpool

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
)

// Tests make and inspect repositories with plain git (never through
// gitops, so a gitops bug cannot hide itself), isolated from the
// machine's git configuration.

func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	path, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	cmd := exec.Command(path, args...)
	cmd.Dir = dir
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "GIT_") }),
		"HOME="+dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.invalid",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.invalid")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v in %s: %v\n%s", args, dir, err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// repo is a bare mirror with a chain of commits, as a pull request run
// finds it.
type repo struct {
	dir     string
	commits []string
}

func newRepo(t *testing.T, n int) repo {
	t.Helper()
	tmp := t.TempDir()
	src := filepath.Join(tmp, "src")
	git(t, tmp, "init", "--quiet", "--initial-branch=main", src)
	var commits []string
	for i := range n {
		for _, f := range []string{"a.txt", fmt.Sprintf("dir/f%d.txt", i)} {
			p := filepath.Join(src, f)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(fmt.Sprintf("%s %d\n", f, i)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		git(t, src, "add", "--all")
		git(t, src, "commit", "--quiet", "-m", fmt.Sprint(i))
		commits = append(commits, git(t, src, "rev-parse", "HEAD"))
	}
	mirror := filepath.Join(tmp, "mirror.git")
	git(t, tmp, "clone", "--quiet", "--bare", src, mirror)
	return repo{dir: mirror, commits: commits}
}

func newGit(t *testing.T) *gitops.Git {
	t.Helper()
	path, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	g, err := gitops.New(gitops.Options{GitPath: path, PATH: os.Getenv("PATH"), HomeDir: filepath.Join(t.TempDir(), "home")})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// newRun adds the worktree of run id at commit, as a run's prepare does.
func newRun(t *testing.T, g *gitops.Git, r repo, id, commit string) string {
	t.Helper()
	wt := filepath.Join(t.TempDir(), id, "worktree")
	if err := g.AddWorktree(context.Background(), r.dir, wt, gitops.RunBranch("ci", id), commit); err != nil {
		t.Fatal(err)
	}
	return wt
}

// worktrees lists the linked worktrees git knows of in r (after a prune).
func worktrees(t *testing.T, r repo) []string {
	t.Helper()
	git(t, r.dir, "worktree", "prune")
	var out []string
	for _, line := range strings.Split(git(t, r.dir, "worktree", "list", "--porcelain"), "\n") {
		if p, ok := strings.CutPrefix(line, "worktree "); ok && p != r.dir {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
