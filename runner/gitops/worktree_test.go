package gitops

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// userRepoState is everything a user would notice changing.
type userRepoState struct {
	Head, Main, Index, Status string
	Files                     map[string]string
}

func captureUserRepo(t *testing.T, g *Git, repo string) userRepoState {
	t.Helper()
	out, err := g.run(context.Background(), call{dir: repo, readOnly: true,
		args: []string{"status", "--porcelain=v1", "-z", "--untracked-files=all"}})
	if err != nil {
		t.Fatal(err)
	}
	index, err := os.ReadFile(filepath.Join(repo, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	return userRepoState{
		Head:   readFile(t, filepath.Join(repo, ".git", "HEAD")),
		Main:   mustGit(t, g, repo, "rev-parse", "refs/heads/main"),
		Index:  hashOf(index),
		Status: string(out),
		Files:  snapshotDir(t, repo),
	}
}

func TestWorktreeLeavesUserRepositoryUntouched(t *testing.T) {
	ctx := context.Background()
	g := newTestGit(t)
	repo := newRepo(t, g, map[string]string{"a.txt": "a\n", "b.txt": "b\n", ".gitignore": "*.log\n"})
	// The user is mid-work: staged, unstaged, untracked and ignored files.
	writeFile(t, repo, "a.txt", "staged\n")
	mustGit(t, g, repo, "add", "a.txt")
	writeFile(t, repo, "b.txt", "unstaged\n")
	writeFile(t, repo, "new.txt", "untracked\n")
	writeFile(t, repo, "x.log", "ignored\n")
	dirty, err := g.IsIndexDirty(ctx, repo)
	if err != nil || !dirty {
		t.Fatalf("IsIndexDirty = %v, %v; want true", dirty, err)
	}
	before := captureUserRepo(t, g, repo)

	wt, branch, base := newRun(t, g, repo)
	for rel, want := range map[string]string{"a.txt": "a\n", "b.txt": "b\n"} {
		if got := readFile(t, filepath.Join(wt, rel)); got != want {
			t.Errorf("worktree %s = %q, want HEAD's %q", rel, got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(wt, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("the user's untracked file leaked into the worktree: %v", err)
	}
	writeFile(t, wt, "a.txt", "node\n")
	writeFile(t, wt, "made.txt", "node\n")
	res, err := g.Checkpoint(ctx, wt, spec(branch, "n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.RemoveWorktree(ctx, repo, wt); err != nil {
		t.Fatal(err)
	}

	if diff := cmp.Diff(captureUserRepo(t, g, repo), before); diff != "" {
		t.Errorf("user repository changed (-got +want):\n%s", diff)
	}
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Errorf("worktree still exists: %v", err)
	}
	if got := mustGit(t, g, repo, "rev-parse", branch); got != res.SHA {
		t.Errorf("run branch after removal = %s, want %s", got, res.SHA)
	}
	if got := mustGit(t, g, repo, "rev-parse", branch+"^"); got != base {
		t.Errorf("run branch parent = %s, want %s", got, base)
	}
	if list := mustGit(t, g, repo, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Errorf("worktree registrations left:\n%s", list)
	}
}

func TestAddWorktreeResetsExistingRunBranchForResume(t *testing.T) {
	ctx := context.Background()
	g := newTestGit(t)
	repo := newRepo(t, g, map[string]string{"a.txt": "a\n"})
	wt, branch, _ := newRun(t, g, repo)
	first, err := g.Checkpoint(ctx, wt, spec(branch, "one"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Checkpoint(ctx, wt, spec(branch, "two")); err != nil {
		t.Fatal(err)
	}
	// The run died without removing its worktree; resume restarts at the
	// checkpoint it had recorded.
	if err := os.RemoveAll(wt); err != nil {
		t.Fatal(err)
	}
	wt2 := filepath.Join(t.TempDir(), "wt2")
	if err := g.AddWorktree(ctx, repo, wt2, branch, first.SHA); err != nil {
		t.Fatal(err)
	}
	if got := mustGit(t, g, wt2, "rev-parse", "HEAD"); got != first.SHA {
		t.Errorf("resumed HEAD = %s, want %s", got, first.SHA)
	}
	if _, err := g.Checkpoint(ctx, wt2, spec(branch, "two")); err != nil {
		t.Errorf("checkpoint in resumed worktree: %v", err)
	}
}

func TestWorktreeRefusals(t *testing.T) {
	ctx := context.Background()
	g := newTestGit(t)
	repo := newRepo(t, g, map[string]string{"a.txt": "a\n"})
	head, _ := g.HeadSHA(ctx, repo)

	if err := g.AddWorktree(ctx, repo, filepath.Join(t.TempDir(), "w"), "main", head); err == nil {
		t.Error("AddWorktree on the user's branch main: no error")
	}
	if err := g.AddWorktree(ctx, repo, filepath.Join(t.TempDir(), "w"), "kilroy/run/bad..name", head); err == nil {
		t.Error("AddWorktree with an invalid ref name: no error")
	}
	if err := g.AddWorktree(ctx, repo, filepath.Join(t.TempDir(), "w"), RunBranch("ci", "x"), "no-such-rev"); err == nil {
		t.Error("AddWorktree at an unknown commit: no error")
	}
	if err := g.RemoveWorktree(ctx, repo, repo); err == nil || !strings.Contains(err.Error(), "main working tree") {
		t.Errorf("RemoveWorktree(main) = %v, want a refusal", err)
	}
	other := t.TempDir()
	writeFile(t, other, "precious.txt", "keep me\n")
	if err := g.RemoveWorktree(ctx, repo, other); err == nil {
		t.Error("RemoveWorktree of an unrelated directory: no error")
	}
	if _, err := os.Stat(filepath.Join(other, "precious.txt")); err != nil {
		t.Errorf("unrelated directory damaged: %v", err)
	}
	if err := g.RemoveWorktree(ctx, repo, filepath.Join(t.TempDir(), "never-existed")); err != nil {
		t.Errorf("RemoveWorktree of a missing worktree = %v, want nil", err)
	}
}

func TestRepoQueries(t *testing.T) {
	ctx := context.Background()
	g := newTestGit(t)
	repo := newRepo(t, g, map[string]string{"sub/a.txt": "a\n"})

	_, err := g.RepoRoot(ctx, t.TempDir())
	if !errors.Is(err, ErrNotRepository) || !strings.Contains(err.Error(), "run inside a git repository or pass --repo") {
		t.Errorf("RepoRoot outside a repository = %v", err)
	}
	root, err := g.RepoRoot(ctx, filepath.Join(repo, "sub"))
	if err != nil || canonicalPath(root) != canonicalPath(repo) {
		t.Errorf("RepoRoot(sub) = %q, %v; want %q", root, err, repo)
	}
	head, err := g.HeadSHA(ctx, repo)
	if err != nil || len(head) != 40 {
		t.Fatalf("HeadSHA = %q, %v", head, err)
	}
	if got, err := g.ResolveRef(ctx, repo, "main"); err != nil || got != head {
		t.Errorf("ResolveRef(main) = %q, %v; want %s", got, err, head)
	}
	for _, bad := range []string{"nope", "--all", ""} {
		if _, err := g.ResolveRef(ctx, repo, bad); err == nil {
			t.Errorf("ResolveRef(%q): no error", bad)
		}
	}
	if dirty, err := g.IsIndexDirty(ctx, repo); err != nil || dirty {
		t.Errorf("clean IsIndexDirty = %v, %v", dirty, err)
	}
	writeFile(t, repo, "sub/a.txt", "unstaged only\n")
	if dirty, err := g.IsIndexDirty(ctx, repo); err != nil || dirty {
		t.Errorf("unstaged change: IsIndexDirty = %v, %v; want false", dirty, err)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	mustGit(t, g, filepath.Dir(empty), "init", "--quiet", empty)
	if _, err := g.HeadSHA(ctx, empty); !errors.Is(err, ErrNoCommit) || !strings.Contains(err.Error(), "at least one commit") {
		t.Errorf("HeadSHA of an empty repository = %v", err)
	}
}
