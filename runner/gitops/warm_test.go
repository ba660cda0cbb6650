package gitops

import (
	"bytes"
	"context"
	"crypto/sha1"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// warmFiles is the first commit of the warm worktree tests.
var warmFiles = map[string]string{
	".gitignore":    "build/\n*.o\n",
	"a.txt":         "a\n",
	"run.sh":        "#!/bin/sh\n",
	"src/b.txt":     "b\n",
	"src/c.txt":     "c\n",
	"docs/readme":   "docs\n",
	"keep/deep/d.c": "d\n",
}

// scene is one residue test: a repository, a first run's worktree in it
// and a directory outside both that a node may try to reach.
type scene struct {
	g                 *Git
	repo, wt, outside string
	admin             string // the worktree's registration
	branch, base      string
}

func newScene(t *testing.T) *scene {
	t.Helper()
	g := newTestGit(t)
	repo := newRepo(t, g, warmFiles)
	mustGit(t, g, repo, "update-index", "--chmod=+x", "run.sh")
	mustGit(t, g, repo, "commit", "--quiet", "-m", "exec")
	wt, branch, base := newRun(t, g, repo)
	outside := filepath.Join(t.TempDir(), "outside")
	writeFile(t, outside, "secret", "outside\n")
	writeFile(t, outside, "readme", "docs\n")
	writeFile(t, outside, "shared", "b\n")
	admin := mustGit(t, g, wt, "rev-parse", "--absolute-git-dir")
	return &scene{g: g, repo: repo, wt: wt, outside: outside, admin: admin, branch: branch, base: base}
}

// nextCommit commits a change to main (one file changed, one added, one
// deleted) and returns it: the pull request's next push.
func (s *scene) nextCommit(t *testing.T) string {
	t.Helper()
	writeFile(t, s.repo, "a.txt", "a2\n")
	writeFile(t, s.repo, "src/new.txt", "new\n")
	mustGit(t, s.g, s.repo, "rm", "--quiet", "keep/deep/d.c")
	mustGit(t, s.g, s.repo, "add", "--all")
	mustGit(t, s.g, s.repo, "commit", "--quiet", "-m", "next")
	return mustGit(t, s.g, s.repo, "rev-parse", "HEAD")
}

func (s *scene) write(t *testing.T, rel, content string) { writeFile(t, s.wt, rel, content) }

func (s *scene) symlink(t *testing.T, target, rel string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(s.wt, rel)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(s.wt, rel)); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// residues are what a run's nodes may leave in its worktree. notReusable
// marks residue the pool cannot undo with certainty: such a worktree is
// refused (and removed by the pool) instead of reused.
var residues = []struct {
	name        string
	leave       func(t *testing.T, s *scene)
	notReusable bool
}{
	{name: "untracked files", leave: func(t *testing.T, s *scene) {
		s.write(t, "junk.txt", "junk\n")
		s.write(t, "new/deep/dir/x.txt", "x\n")
	}},
	{name: "ignored build output", leave: func(t *testing.T, s *scene) {
		s.write(t, "build/bin/app", "elf\n")
		s.write(t, "src/b.o", "obj\n")
	}},
	{name: "modified, deleted, staged and re-moded tracked files", leave: func(t *testing.T, s *scene) {
		s.write(t, "a.txt", "changed\n")
		mustGit(t, s.g, s.wt, "add", "a.txt")
		must(t, os.Remove(filepath.Join(s.wt, "src/b.txt")))
		must(t, os.Chmod(filepath.Join(s.wt, "src/c.txt"), 0o4000))
		must(t, os.Chmod(filepath.Join(s.wt, "run.sh"), 0o644))
		must(t, os.Chmod(filepath.Join(s.wt, "docs"), 0o700))
		must(t, os.RemoveAll(filepath.Join(s.wt, "keep")))
	}},
	{name: "files named like git internals", leave: func(t *testing.T, s *scene) {
		for _, name := range []string{"HEAD", "index", "config", "objects/info/alternates", "src/.git", "info/exclude"} {
			s.write(t, name, "gitdir: "+s.outside+"\n")
		}
	}},
	{name: "nested repositories", leave: func(t *testing.T, s *scene) {
		s.write(t, "src/.git/config", "[core]\n\tworktree = /\n")
		s.write(t, "keep/.git/HEAD", "ref: refs/heads/main\n")
		mustGit(t, s.g, s.wt, "init", "--quiet", "vendor/lib")
		s.write(t, "vendor/lib/x.go", "package lib\n")
	}},
	{name: "symlinks out", leave: func(t *testing.T, s *scene) {
		s.symlink(t, s.outside, "out")
		s.symlink(t, s.outside, "docs")                           // a tracked directory
		s.symlink(t, filepath.Join(s.outside, "secret"), "a.txt") // a tracked file
		s.symlink(t, s.outside, "build")                          // an ignored directory
	}},
	{name: "hard link out", leave: func(t *testing.T, s *scene) {
		must(t, os.Remove(filepath.Join(s.wt, "src/b.txt")))
		must(t, os.Link(filepath.Join(s.outside, "shared"), filepath.Join(s.wt, "src/b.txt")))
	}},
	{name: "hard link in from outside, mode and same-size content changed", leave: func(t *testing.T, s *scene) {
		must(t, os.Link(filepath.Join(s.wt, "src/c.txt"), filepath.Join(s.outside, "linked")))
		must(t, os.Remove(filepath.Join(s.outside, "linked")))
		must(t, os.Link(filepath.Join(s.wt, "run.sh"), filepath.Join(s.outside, "linked")))
		must(t, os.Chmod(filepath.Join(s.wt, "a.txt"), 0o600))
		s.write(t, "src/b.txt", "B\n")
	}},
	{name: "worktree .git replaced by a repository", leave: func(t *testing.T, s *scene) {
		must(t, os.Remove(filepath.Join(s.wt, ".git")))
		s.write(t, ".git/config", "[core]\n\tbare = false\n\tworktree = "+s.outside+"\n")
		s.write(t, ".git/HEAD", "ref: refs/heads/main\n")
	}},
	{name: "worktree .git pointing elsewhere", leave: func(t *testing.T, s *scene) {
		must(t, os.Remove(filepath.Join(s.wt, ".git")))
		s.symlink(t, s.outside, ".git")
	}},
	{name: "git state in the registration", leave: func(t *testing.T, s *scene) {
		writeFile(t, s.admin, "config.worktree", "[core]\n\tsparseCheckout = true\n")
		writeFile(t, s.admin, "info/sparse-checkout", "/a.txt\n")
		writeFile(t, s.admin, "MERGE_HEAD", s.base+"\n")
		writeFile(t, s.admin, "rebase-merge/head-name", "refs/heads/main\n")
		writeFile(t, s.admin, "hooks/post-checkout", "#!/bin/sh\ntouch "+filepath.Join(s.outside, "hooked")+"\n")
		writeFile(t, s.admin, "refs/bisect/bad", s.base+"\n")
	}},
	{name: "HEAD moved off the run branch", leave: func(t *testing.T, s *scene) {
		mustGit(t, s.g, s.wt, "checkout", "--quiet", "-b", "kilroy/other")
		s.write(t, "a.txt", "other\n")
		mustGit(t, s.g, s.wt, "commit", "--quiet", "-am", "other")
	}},
	{name: "content written back under its old mtime", leave: func(t *testing.T, s *scene) {
		// Only the ctime tells: git compares it to the second, and the
		// file's mtime is older than the index, so not racily clean.
		p, old := filepath.Join(s.wt, "src/c.txt"), time.Now().Add(-time.Hour)
		must(t, os.Chtimes(p, old, old))
		mustGit(t, s.g, s.wt, "update-index", "--refresh")
		s.write(t, "src/c.txt", "C\n")
		must(t, os.Chtimes(p, old, old))
	}},
	{name: "staged change to a file the next commit keeps, written as a tree", leave: func(t *testing.T, s *scene) {
		s.write(t, "src/c.txt", "staged\n")
		mustGit(t, s.g, s.wt, "add", "src/c.txt")
		mustGit(t, s.g, s.wt, "write-tree")
	}},
	{name: "cache tree that disagrees with the entries", notReusable: true, leave: func(t *testing.T, s *scene) {
		mustGit(t, s.g, s.wt, "write-tree") // a valid cache tree to forge
		forgeCacheTree(t, filepath.Join(s.admin, "index"))
	}},
	{name: "skip-worktree bit", notReusable: true, leave: func(t *testing.T, s *scene) {
		mustGit(t, s.g, s.wt, "update-index", "--skip-worktree", "src/b.txt")
		s.write(t, "src/b.txt", "hidden\n")
	}},
	{name: "assume-unchanged bit", notReusable: true, leave: func(t *testing.T, s *scene) {
		mustGit(t, s.g, s.wt, "update-index", "--assume-unchanged", "src/c.txt")
		s.write(t, "src/c.txt", "hidden\n")
	}},
	{name: "index replaced by a symlink", notReusable: true, leave: func(t *testing.T, s *scene) {
		must(t, os.Remove(filepath.Join(s.admin, "index")))
		must(t, os.Symlink(filepath.Join(s.outside, "secret"), filepath.Join(s.admin, "index")))
	}},
}

// TestWarmWorktreeLeavesNothing parks a worktree its run left residue in
// and reuses it for the pull request's next commit: the reused worktree
// must equal a fresh checkout of that commit on the new run's branch, and
// nothing outside the worktree may have changed. The same residue left
// while the worktree is parked (by a process that outlived its run) must
// go too, although reuse looks at less than parking does.
func TestWarmWorktreeLeavesNothing(t *testing.T) {
	for _, whileParked := range []bool{false, true} {
		for _, tc := range residues {
			name := tc.name
			if whileParked {
				name += " while parked"
			}
			t.Run(name, func(t *testing.T) {
				testResidue(t, tc.leave, tc.notReusable, whileParked)
			})
		}
	}
}

// forgeCacheTree changes the id of the top tree in the cache tree of the
// index at p, as a run that can write the registration could, and
// updates the index's checksum so git still reads it.
func forgeCacheTree(t *testing.T, p string) {
	t.Helper()
	b, err := os.ReadFile(p)
	must(t, err)
	body := b[:len(b)-sha1.Size]
	i := bytes.LastIndex(body, []byte("TREE"))
	top := body[i+8:] // name (empty), NUL, "<entries> <subtrees>\n", id
	nl := bytes.IndexByte(top, '\n')
	if i < 0 || top[0] != 0 || nl < 0 || top[1] == '-' {
		t.Fatalf("no valid cache tree in %s", p)
	}
	top[nl+1] ^= 0xff
	sum := sha1.Sum(body)
	copy(b[len(body):], sum[:])
	must(t, os.WriteFile(p, b, 0o644))
}

func testResidue(t *testing.T, leave func(*testing.T, *scene), notReusable, whileParked bool) {
	ctx := context.Background()
	s := newScene(t)
	next := s.nextCommit(t)
	parked := filepath.Join(t.TempDir(), "parked")
	var before map[string]string // outside, after the residue was left
	if !whileParked {
		leave(t, s)
		before = dirSnapshot(t, s.outside)
	}
	err := s.g.ParkWorktree(ctx, s.repo, s.wt, parked, s.base)
	if err == nil && whileParked {
		s.wt = parked
		leave(t, s)
		before = dirSnapshot(t, s.outside)
	}
	branch := RunBranch("ci", "r2")
	wt2 := filepath.Join(t.TempDir(), "wt2")
	if err == nil {
		err = s.g.ReuseWorktree(ctx, s.repo, parked, wt2, branch, next)
	}
	if notReusable {
		if !errors.Is(err, ErrNotReusable) {
			t.Fatalf("park and reuse: %v, want ErrNotReusable", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	assertFreshCheckout(t, s.g, s.repo, wt2, branch, next)
	if diff := cmp.Diff(dirSnapshot(t, s.outside), before); diff != "" {
		t.Errorf("outside the worktree (-got +want):\n%s", diff)
	}
	if tip := mustGit(t, s.g, s.repo, "rev-parse", s.branch); tip == "" {
		t.Errorf("first run's branch %s lost", s.branch)
	}
}
