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

// newBareRemote creates a bare repository and returns its file:// URL.
func newBareRemote(t *testing.T, g *Git) (dir, url string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "remote.git")
	mustGit(t, g, filepath.Dir(dir), "init", "--quiet", "--bare", dir)
	return dir, "file://" + dir
}

func TestMirrorFetchAndWorktreeFromMirror(t *testing.T) {
	ctx := context.Background()
	g := newTestGit(t)
	src := newRepo(t, g, map[string]string{"a.txt": "a\n"})
	mustGit(t, g, src, "tag", "v1")
	srcURL := "file://" + src
	mirror := filepath.Join(t.TempDir(), "mirrors", "o", "r.git")

	for i := 0; i < 2; i++ { // idempotent
		if err := g.EnsureMirror(ctx, mirror, srcURL); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Fetch(ctx, mirror, srcURL); err != nil {
		t.Fatal(err)
	}
	head, _ := g.HeadSHA(ctx, src)
	for _, ref := range []string{"refs/remotes/origin/main", "refs/tags/v1"} {
		if got, err := g.ResolveRef(ctx, mirror, ref); err != nil || got != head {
			t.Errorf("mirror %s = %q, %v; want %s", ref, got, err, head)
		}
	}
	if cfg := readFile(t, filepath.Join(mirror, "config")); strings.Contains(cfg, src) {
		t.Errorf("mirror config stores the URL:\n%s", cfg)
	}

	branch := RunBranch("ci", "m1")
	wt := filepath.Join(t.TempDir(), "wt")
	if err := g.AddWorktree(ctx, mirror, wt, branch, head); err != nil {
		t.Fatal(err)
	}
	writeFile(t, wt, "b.txt", "b\n")
	res, err := g.Checkpoint(ctx, wt, spec(branch, "n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := g.ResolveRef(ctx, mirror, "refs/heads/"+branch); got != res.SHA {
		t.Errorf("mirror run branch = %s, want %s", got, res.SHA)
	}
	// A new upstream commit arrives; the next fetch must not fight the run
	// branch checked out in the worktree.
	writeFile(t, src, "c.txt", "c\n")
	mustGit(t, g, src, "add", "c.txt")
	mustGit(t, g, src, "commit", "--quiet", "-m", "c")
	if err := g.Fetch(ctx, mirror, srcURL); err != nil {
		t.Errorf("second fetch with a live worktree: %v", err)
	}
	if err := g.RemoveWorktree(ctx, mirror, wt); err != nil {
		t.Fatal(err)
	}

	occupied := t.TempDir()
	writeFile(t, occupied, "data.txt", "x")
	if err := g.EnsureMirror(ctx, occupied, srcURL); err == nil {
		t.Error("EnsureMirror on a non-empty directory: no error")
	}
}

func TestFileProtocolRefusedByDefault(t *testing.T) {
	ctx := context.Background()
	g := newTestGit(t)
	src := newRepo(t, g, nil)
	strict := newTestGit(t, func(o *Options) { o.AllowFileProtocol = false })
	mirror := filepath.Join(t.TempDir(), "m.git")
	if err := strict.EnsureMirror(ctx, mirror, "file://"+src); err != nil {
		t.Fatal(err)
	}
	if err := strict.Fetch(ctx, mirror, "file://"+src); err == nil {
		t.Error("fetch over file:// without AllowFileProtocol: no error")
	}
}

func TestPushRetriesRejectedPushAfterReadingRemote(t *testing.T) {
	ctx := context.Background()
	g := newTestGit(t)
	remoteDir, remote := newBareRemote(t, g)
	repo := newRepo(t, g, map[string]string{"a.txt": "a\n"})
	wt, branch, _ := newRun(t, g, repo)
	first, err := g.Checkpoint(ctx, wt, spec(branch, "one"))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Push(ctx, wt, remote, branch); err != nil {
		t.Fatal(err)
	}
	if got, _ := g.ResolveRef(ctx, remoteDir, "refs/heads/"+branch); got != first.SHA {
		t.Fatalf("remote branch = %s, want %s", got, first.SHA)
	}

	// Someone else updates the remote run branch concurrently.
	other := filepath.Join(t.TempDir(), "other")
	mustGit(t, g, filepath.Dir(other), "clone", "--quiet", "--branch", branch, remote, other)
	writeFile(t, other, "theirs.txt", "x\n")
	mustGit(t, g, other, "add", "theirs.txt")
	mustGit(t, g, other, "commit", "--quiet", "-m", "concurrent")
	mustGit(t, g, other, "push", "--quiet", "origin", branch)

	writeFile(t, wt, "mine.txt", "y\n")
	second, err := g.Checkpoint(ctx, wt, spec(branch, "two"))
	if err != nil {
		t.Fatal(err)
	}
	// A plain push is non-fast-forward now.
	if rejected, err := g.push(ctx, wt, remote, "refs/heads/"+branch, ""); err != nil || !rejected {
		t.Fatalf("plain push: rejected=%v err=%v, want a retryable rejection", rejected, err)
	}
	if err := g.Push(ctx, wt, remote, branch); err != nil {
		t.Fatalf("push with retry: %v", err)
	}
	if got, _ := g.ResolveRef(ctx, remoteDir, "refs/heads/"+branch); got != second.SHA {
		t.Errorf("remote branch = %s, want %s", got, second.SHA)
	}
	if err := g.Push(ctx, wt, remote, "main"); err == nil {
		t.Error("pushing a non-bot branch: no error")
	}
}

func TestMergeBranches(t *testing.T) {
	ctx := context.Background()
	g := newTestGit(t)
	repo := newRepo(t, g, map[string]string{"shared.txt": "base\n"})
	base, _ := g.HeadSHA(ctx, repo)
	mainBranch := RunBranch("ci", "fan")
	wt := filepath.Join(t.TempDir(), "main")
	if err := g.AddWorktree(ctx, repo, wt, mainBranch, base); err != nil {
		t.Fatal(err)
	}
	branch := func(name string, files map[string]string) string {
		b := mainBranch + "-" + name
		dir := filepath.Join(t.TempDir(), name)
		if err := g.AddWorktree(ctx, repo, dir, b, base); err != nil {
			t.Fatal(err)
		}
		for rel, content := range files {
			writeFile(t, dir, rel, content)
		}
		if _, err := g.Checkpoint(ctx, dir, CheckpointSpec{RunID: "fan", NodeID: name, Status: "success", Branch: b}); err != nil {
			t.Fatal(err)
		}
		return b
	}
	a := branch("a", map[string]string{"a.txt": "a\n"})
	b := branch("b", map[string]string{"b.txt": "b\n"})
	sha, err := g.MergeBranches(ctx, wt, []string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(treeFiles(t, g, wt, sha), []string{"a.txt", "b.txt", "shared.txt"}); diff != "" {
		t.Errorf("merged tree (-got +want):\n%s", diff)
	}
	if got := mustGit(t, g, wt, "log", "--format=%s", base+"..HEAD", "--first-parent"); got != "kilroy: merge "+b+"\nkilroy: merge "+a {
		t.Errorf("merge order:\n%s", got)
	}

	c := branch("c", map[string]string{"shared.txt": "c side\n", "conflict two.txt": "c\n"})
	d := branch("d", map[string]string{"shared.txt": "d side\n", "conflict two.txt": "d\n", "d.txt": "d\n"})
	before := mustGit(t, g, wt, "rev-parse", "HEAD")
	_, err = g.MergeBranches(ctx, wt, []string{c, d})
	var conflict *MergeConflictError
	if !errors.As(err, &conflict) {
		t.Fatalf("err = %v, want *MergeConflictError", err)
	}
	if diff := cmp.Diff(conflict.Paths, []string{"conflict two.txt", "shared.txt"}); diff != "" {
		t.Errorf("conflict paths (-got +want):\n%s", diff)
	}
	if conflict.Branch != d || !strings.Contains(err.Error(), "shared.txt") {
		t.Errorf("conflict error %q: want branch %s and the paths", err, d)
	}
	if got := mustGit(t, g, wt, "rev-parse", "HEAD"); got != before {
		t.Errorf("HEAD after a failed merge = %s, want %s", got, before)
	}
	if st := mustGit(t, g, wt, "status", "--porcelain"); st != "" {
		t.Errorf("worktree not clean after the aborted merge:\n%s", st)
	}
	gitDir := mustGit(t, g, wt, "rev-parse", "--absolute-git-dir")
	if _, err := os.Stat(filepath.Join(gitDir, "MERGE_HEAD")); !os.IsNotExist(err) {
		t.Errorf("MERGE_HEAD left behind: %v", err)
	}
}
