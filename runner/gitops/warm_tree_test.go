package gitops

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// TestIndexTreesAreGits: the trees computed from an index's entries are
// the ones git writes, for names whose order is easy to get wrong, every
// mode and a gitlink, and the cache tree git wrote agrees with them.
func TestIndexTreesAreGits(t *testing.T) {
	g := newTestGit(t)
	repo := newRepo(t, g, map[string]string{
		"ab": "1", "a-b/x": "2", "a.b": "3", "a/x": "4", "a0": "5", "b/c/d/e": "6", "b/c.d": "7",
		"run.sh": "#!/bin/sh\n",
	})
	must(t, os.Symlink("a/x", filepath.Join(repo, "link")))
	mustGit(t, g, repo, "add", "link")
	mustGit(t, g, repo, "update-index", "--chmod=+x", "run.sh")
	head := mustGit(t, g, repo, "rev-parse", "HEAD")
	mustGit(t, g, repo, "update-index", "--add", "--cacheinfo", "160000,"+head+",b/sub")
	want := mustGit(t, g, repo, "write-tree")

	idx, err := readIndex(filepath.Join(repo, ".git", "index"))
	must(t, err)
	trees, err := indexTrees(idx.entries)
	must(t, err)
	top := trees[""].oid
	if got := hex.EncodeToString(top[:]); got != want {
		t.Errorf("top tree %s, git write-tree says %s", got, want)
	}
	for _, dir := range []string{"a", "b", "b/c", "b/c/d"} {
		n := trees[dir]
		if got, want := hex.EncodeToString(n.oid[:]), mustGit(t, g, repo, "rev-parse", want+":"+dir); got != want {
			t.Errorf("tree of %s: %s, git says %s", dir, got, want)
		}
	}
	if idx.cacheTree == nil {
		t.Fatal("no cache tree after write-tree")
	}
	if err := checkCacheTree(idx.cacheTree, trees); err != nil {
		t.Errorf("git's cache tree: %v", err)
	}
}

// TestIndexTreesRefuseDisorder: entries out of git's order (which git
// would not write) are refused, not hashed into some other tree.
func TestIndexTreesRefuseDisorder(t *testing.T) {
	for _, paths := range [][]string{
		{"b", "a"},
		{"a/x", "a.b"},
		{"a/x", "a/x"},
		{"d/y", "e", "d/z"},
	} {
		var entries []indexEntry
		for _, p := range paths {
			entries = append(entries, indexEntry{path: p, mode: modeFile})
		}
		if _, err := indexTrees(entries); err == nil {
			t.Errorf("indexTrees(%q) took them", paths)
		}
	}
	ok := []indexEntry{{path: "a.b", mode: modeFile}, {path: "a/x", mode: modeFile}, {path: "a0", mode: modeFile}}
	if _, err := indexTrees(ok); err != nil {
		t.Errorf("indexTrees(a.b, a/x, a0): %v", err)
	}
}

func TestTopmostPaths(t *testing.T) {
	tests := []struct {
		out  string
		want []string
	}{
		{"", []string{}},
		{"a.txt\x00src/b.txt\x00", []string{"a.txt", "src/b.txt"}},
		{"a.txt\x00a.txt/inner\x00", []string{"a.txt"}},
		{"src\x00src/b.txt\x00src/deep/c.txt\x00", []string{"src"}},
		{"a\x00ab/c\x00a-b/c\x00", []string{"a", "ab/c", "a-b/c"}},
		{"x/y\x00x/y/z/w\x00x/v\x00", []string{"x/y", "x/v"}},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(topmostPaths([]byte(tc.out)), tc.want); diff != "" {
			t.Errorf("topmostPaths(%q) (-got +want):\n%s", tc.out, diff)
		}
	}
}

// TestTidyKeepsOnlyFilesAsRecorded: a tracked file stays only when it is
// exactly what its index entry recorded; one git would call racily clean
// is compared by content, others are trusted by their stat data.
func TestTidyKeepsOnlyFilesAsRecorded(t *testing.T) {
	tests := []struct {
		name  string
		alter func(t *testing.T, p string, e *indexEntry, idx *workIndex)
		want  bool
	}{
		{"as recorded", func(*testing.T, string, *indexEntry, *workIndex) {}, true},
		{"other content, stat as recorded, not racy", func(_ *testing.T, _ string, e *indexEntry, _ *workIndex) {
			e.oid[0] ^= 1
		}, true},
		{"other content, stat as recorded, racily clean", func(_ *testing.T, _ string, e *indexEntry, idx *workIndex) {
			e.oid[0] ^= 1
			idx.mtime = time.Unix(int64(e.mtimeSec), int64(e.mtimeNsec))
		}, false},
		{"other content, stat as recorded, a nanosecond before the index", func(_ *testing.T, _ string, e *indexEntry, idx *workIndex) {
			e.oid[0] ^= 1
			idx.mtime = time.Unix(int64(e.mtimeSec), int64(e.mtimeNsec)+1)
		}, true},
		{"racily clean, same content", func(_ *testing.T, _ string, e *indexEntry, idx *workIndex) {
			idx.mtime = time.Unix(int64(e.mtimeSec), int64(e.mtimeNsec))
		}, true},
		{"ctime a nanosecond off", func(_ *testing.T, _ string, e *indexEntry, _ *workIndex) {
			e.ctimeNsec ^= 1
		}, false},
		{"executable bit not recorded", func(t *testing.T, p string, e *indexEntry, _ *workIndex) {
			e.mode = modeExec
		}, false},
		{"set-uid", func(t *testing.T, p string, e *indexEntry, _ *workIndex) {
			must(t, os.Chmod(p, os.ModeSetuid|0o666&^umask()))
			recordStat(t, p, e)
		}, false},
		{"hard-linked", func(t *testing.T, p string, e *indexEntry, _ *workIndex) {
			must(t, os.Link(p, p+".other"))
			recordStat(t, p, e)
		}, false},
		{"a symlink where a file was", func(t *testing.T, p string, e *indexEntry, _ *workIndex) {
			must(t, os.Remove(p))
			must(t, os.Symlink("x", p))
			recordStat(t, p, e)
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "f")
			content := []byte("content\n")
			must(t, os.WriteFile(p, content, 0o666&^umask()))
			e := indexEntry{path: "f", mode: modeFile, oid: gitBlobID(content)}
			recordStat(t, p, &e)
			idx := &workIndex{mtime: time.Now().Add(time.Minute)}
			tc.alter(t, p, &e, idx)
			idx.entries = []indexEntry{e}
			got := keeps(t, dir, idx)
			if got != tc.want {
				t.Errorf("kept %v, want %v", got, tc.want)
			}
		})
	}
}

// recordStat fills e's stat data from the file at p, as git would.
func recordStat(t *testing.T, p string, e *indexEntry) {
	t.Helper()
	var st unix.Stat_t
	must(t, unix.Lstat(p, &st))
	e.ctimeSec, e.ctimeNsec = uint32(st.Ctim.Sec), uint32(st.Ctim.Nsec)
	e.mtimeSec, e.mtimeNsec = uint32(st.Mtim.Sec), uint32(st.Mtim.Nsec)
	e.ino, e.uid, e.gid, e.size = uint32(st.Ino), st.Uid, st.Gid, uint32(st.Size)
}

// keeps says whether tidying dir against idx keeps its one entry.
func keeps(t *testing.T, dir string, idx *workIndex) bool {
	t.Helper()
	root, err := os.OpenRoot(dir)
	must(t, err)
	defer root.Close()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	must(t, err)
	defer unix.Close(fd)
	var st unix.Stat_t
	must(t, fstatat(fd, "f", &st))
	keep, err := newTidier(root, idx).unchanged(fd, "f", []byte("f"), &st, &idx.entries[0])
	must(t, err)
	return keep
}

// TestWriteKept: a file scrub writes is kept only when it is a plain
// file of one link holding exactly what would be written; anything else
// is replaced without writing through it.
func TestWriteKept(t *testing.T) {
	const body = "gitdir: /x\n"
	tests := []struct {
		name  string
		setup func(t *testing.T, p, outside string)
		kept  bool
	}{
		{"missing", func(*testing.T, string, string) {}, false},
		{"same content", func(t *testing.T, p, _ string) { must(t, os.WriteFile(p, []byte(body), 0o644)) }, true},
		{"other content", func(t *testing.T, p, _ string) { must(t, os.WriteFile(p, []byte("gitdir: /y\n"), 0o644)) }, false},
		{"longer content", func(t *testing.T, p, _ string) { must(t, os.WriteFile(p, []byte(body+"x"), 0o644)) }, false},
		{"symlink to a file holding it", func(t *testing.T, p, outside string) { must(t, os.Symlink(outside, p)) }, false},
		{"hard link to a file holding it", func(t *testing.T, p, outside string) { must(t, os.Link(outside, p)) }, false},
		{"directory", func(t *testing.T, p, _ string) { must(t, os.MkdirAll(filepath.Join(p, "sub"), 0o755)) }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p, outside := filepath.Join(dir, ".git"), filepath.Join(t.TempDir(), "outside")
			must(t, os.WriteFile(outside, []byte(body), 0o644))
			tc.setup(t, p, outside)
			var before unix.Stat_t
			if fd, err := unix.Open(p, unix.O_PATH|unix.O_NOFOLLOW, 0); err == nil {
				defer unix.Close(fd) // holds the inode: its number is not reused
				must(t, unix.Fstat(fd, &before))
			}
			must(t, writeKept(dir, ".git", body))
			var after unix.Stat_t
			must(t, unix.Lstat(p, &after))
			got := []any{readFile(t, p), after.Mode&unix.S_IFMT == unix.S_IFREG, after.Nlink, before.Ino == after.Ino, readFile(t, outside)}
			want := []any{body, true, uint64(1), tc.kept, body}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("content, regular, links, kept, outside (-got +want):\n%s", diff)
			}
		})
	}
}
