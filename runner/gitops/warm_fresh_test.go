package gitops

import (
	"bytes"
	"context"
	"crypto/sha1"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// assertFreshCheckout fails t unless the worktree at wt is what a fresh
// `git worktree add -B branch wt sha` makes: git status (ignored files
// included) is empty, every file and symlink on disk is a path of sha's
// tree with its content's blob id and mode, every path of the tree is on
// disk, no directory is empty, no file is hard-linked, and the
// registration holds only HEAD (on branch), commondir, gitdir and an
// index without flags.
func assertFreshCheckout(t *testing.T, g *Git, repo, wt, branch, sha string) {
	t.Helper()
	if st := mustGit(t, g, wt, "status", "--porcelain", "--ignored", "--untracked-files=all"); st != "" {
		t.Errorf("git status --ignored in the reused worktree:\n%s", st)
	}
	want := lsTree(t, g, wt, sha)
	if diff := cmp.Diff(diskTree(t, wt), want); diff != "" {
		t.Errorf("worktree vs git ls-tree -r %s (-got +want):\n%s", sha, diff)
	}
	fresh := filepath.Join(t.TempDir(), "fresh")
	if err := g.AddWorktree(context.Background(), repo, fresh, branch+"-fresh", sha); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(perms(t, wt), perms(t, fresh)); diff != "" {
		t.Errorf("permissions vs a fresh checkout (-got +want):\n%s", diff)
	}
	if tags := mustGit(t, g, wt, "ls-files", "-v"); strings.Contains("\n"+tags, "\nS ") || strings.ContainsAny(firstChars(tags), "hsmrck") {
		t.Errorf("index flags left (git ls-files -v):\n%s", tags)
	}
	if head := mustGit(t, g, wt, "symbolic-ref", "HEAD"); head != "refs/heads/"+branch {
		t.Errorf("HEAD = %s, want refs/heads/%s", head, branch)
	}
	if tip := mustGit(t, g, wt, "rev-parse", "HEAD"); tip != sha {
		t.Errorf("HEAD at %s, want %s", tip, sha)
	}
	if diff := cmp.Diff(registration(t, wt), registration(t, fresh)); diff != "" {
		t.Errorf("registration vs a fresh checkout's (-got +want):\n%s", diff)
	}
}

// registration lists the files of the worktree's registration, as found
// through its .git file.
func registration(t *testing.T, wt string) []string {
	t.Helper()
	admin := strings.TrimPrefix(strings.TrimSpace(readFile(t, filepath.Join(wt, ".git"))), "gitdir: ")
	var names []string
	err := filepath.WalkDir(admin, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(admin, p)
			names = append(names, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func firstChars(lines string) string {
	var b strings.Builder
	for _, l := range strings.Split(lines, "\n") {
		if l != "" {
			b.WriteByte(l[0])
		}
	}
	return b.String()
}

// lsTree is sha's tree as "mode blob-id" by path.
func lsTree(t *testing.T, g *Git, dir, sha string) map[string]string {
	t.Helper()
	out, err := g.run(context.Background(), call{dir: dir, args: []string{"ls-tree", "-r", "-z", sha}})
	if err != nil {
		t.Fatal(err)
	}
	tree := map[string]string{}
	for _, rec := range splitNul(out) {
		meta, path, _ := strings.Cut(rec, "\t")
		f := strings.Fields(meta) // mode type id
		tree[path] = f[0] + " " + f[2]
	}
	return tree
}

// diskTree hashes the worktree as git would ("mode blob-id" by path),
// without git: regular files and symlinks; anything else, an empty
// directory or a hard-linked file is recorded as a problem.
func diskTree(t *testing.T, wt string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(wt, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(wt, p)
		rel = filepath.ToSlash(rel)
		if rel == ".git" {
			return nil
		}
		got[rel] = diskEntry(t, p, d)
		if got[rel] == "" {
			delete(got, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func diskEntry(t *testing.T, p string, d fs.DirEntry) string {
	fi, err := d.Info()
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case fi.IsDir():
		if es, _ := os.ReadDir(p); len(es) == 0 {
			return "empty directory"
		}
		return ""
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(p)
		if err != nil {
			t.Fatal(err)
		}
		return "120000 " + blobID([]byte(target))
	case fi.Mode().IsRegular():
		if nlink(fi) > 1 {
			return "hard-linked file"
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return "unreadable: " + err.Error()
		}
		if fi.Mode()&0o100 != 0 {
			return "100755 " + blobID(b)
		}
		return "100644 " + blobID(b)
	}
	return "special file " + fi.Mode().String()
}

func blobID(b []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(b))
	h.Write(b)
	return fmt.Sprintf("%x", h.Sum(nil))
}

// dirSnapshot is every path under dir with its content (a symlink's
// target), to prove a directory outside the worktree was not touched.
func dirSnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	snap := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			s, _ := os.Readlink(p)
			snap[p] = "-> " + s
		case d.Type().IsRegular():
			b, _ := os.ReadFile(p)
			snap[p] = string(bytes.TrimSpace(b))
		default:
			snap[p] = "dir"
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// perms is the permission bits of everything under wt but its .git, by
// path, for comparing with a fresh checkout's.
func perms(t *testing.T, wt string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(wt, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(wt, p)
		if rel == ".git" || d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		got[filepath.ToSlash(rel)] = fmt.Sprintf("%o", fi.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func nlink(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
