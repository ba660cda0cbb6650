package gitops

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseCountObjects(t *testing.T) {
	out := "count: 12\nsize: 48\nin-pack: 300\npacks: 7\nsize-pack: 90\nprune-packable: 0\ngarbage: 0\nsize-garbage: 0"
	got, err := parseCountObjects(out)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, ObjectCounts{Loose: 12, Packs: 7}); diff != "" {
		t.Errorf("parseCountObjects (-got +want):\n%s", diff)
	}
	if _, err := parseCountObjects("count: many"); err == nil {
		t.Error("parseCountObjects of a non-number: no error")
	}
}

func TestNeedsGC(t *testing.T) {
	for _, tt := range []struct {
		c    ObjectCounts
		want bool
	}{
		{ObjectCounts{}, false},
		{ObjectCounts{Loose: gcLooseLimit, Packs: gcPackLimit}, false},
		{ObjectCounts{Loose: gcLooseLimit + 1, Packs: 1}, true},
		{ObjectCounts{Loose: 0, Packs: gcPackLimit + 1}, true},
	} {
		if got := tt.c.needsGC(); got != tt.want {
			t.Errorf("%+v.needsGC() = %v, want %v", tt.c, got, tt.want)
		}
	}
}

// newMirror makes a bare mirror of a new source repository and fetches it.
func newMirror(t *testing.T, g *Git) (mirror, src string) {
	t.Helper()
	src = newRepo(t, g, map[string]string{"a.txt": "a\n"})
	mirror = filepath.Join(t.TempDir(), "mirrors", "o", "r.git")
	ctx := context.Background()
	if err := g.EnsureMirror(ctx, mirror, "file://"+src); err != nil {
		t.Fatal(err)
	}
	if err := g.Fetch(ctx, mirror, "file://"+src); err != nil {
		t.Fatal(err)
	}
	return mirror, src
}

func countObjects(t *testing.T, g *Git, dir string) ObjectCounts {
	t.Helper()
	c, err := g.CountObjects(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// looseRefs counts the ref files under dir/refs (packed refs live in
// dir/packed-refs instead).
func looseRefs(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(filepath.Join(dir, "refs"), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestMaintainMirrorLeavesSmallMirrorAlone(t *testing.T) {
	g := newTestGit(t)
	mirror, _ := newMirror(t, g)
	before := countObjects(t, g, mirror)
	m, err := g.MaintainMirror(context.Background(), mirror)
	if err != nil {
		t.Fatal(err)
	}
	if m.Collected || m.Before != before {
		t.Errorf("MaintainMirror = %+v, want nothing collected and Before %+v", m, before)
	}
	if after := countObjects(t, g, mirror); after != before {
		t.Errorf("objects after = %+v, want untouched %+v", after, before)
	}
}

// TestMaintainMirrorConsolidatesPacks: a mirror that 60 fetches left with
// a pack each is collected into one pack with packed refs, and a worktree
// made from the mirror before the gc keeps working: its commits, its
// staged file and an object its git wrote but nothing references yet all
// survive, while an unreachable object past the grace period goes.
func TestMaintainMirrorConsolidatesPacks(t *testing.T) {
	ctx := context.Background()
	g := newTestGit(t)
	mirror, src := newMirror(t, g)

	head, err := g.HeadSHA(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	branch := RunBranch("ci", "gc1")
	wt := filepath.Join(t.TempDir(), "wt")
	if err := g.AddWorktree(ctx, mirror, wt, branch, head); err != nil {
		t.Fatal(err)
	}
	writeFile(t, wt, "committed.txt", "committed\n")
	mustGit(t, g, wt, "add", "committed.txt")
	mustGit(t, g, wt, "commit", "--quiet", "-m", "work in the worktree")
	writeFile(t, wt, "staged.txt", "staged only\n")
	mustGit(t, g, wt, "add", "staged.txt")
	stagedBlob := mustGit(t, g, wt, "rev-parse", ":staged.txt")
	// Written by the worktree's git but not referenced yet, like the
	// objects of a checkpoint in progress: only the grace period keeps it.
	young := hashObject(t, g, wt, "young and unreferenced\n")
	old := hashObject(t, g, wt, "old and unreferenced\n")
	past := time.Now().Add(-30 * 24 * time.Hour)
	if err := os.Chtimes(looseObjectPath(mirror, old), past, past); err != nil {
		t.Fatal(err)
	}

	// Fetches of 100 objects or more keep their pack; unpackLimit=1 makes
	// each of these small ones do the same.
	for i := range 60 {
		mustGit(t, g, src, "commit", "--quiet", "--allow-empty", "-m", fmt.Sprintf("upstream %d", i))
		mustGit(t, g, src, "--git-dir="+mirror, "-c", "fetch.unpackLimit=1", "fetch", "--quiet", "--no-tags",
			"file://"+src, fmt.Sprintf("+refs/heads/main:refs/remotes/origin/fetch-%d", i))
	}
	before := countObjects(t, g, mirror)
	refsBefore := looseRefs(t, mirror)
	if before.Packs < 60 {
		t.Fatalf("setup: %d packs, want at least 60", before.Packs)
	}

	m, err := g.MaintainMirror(ctx, mirror)
	if err != nil {
		t.Fatal(err)
	}
	after := countObjects(t, g, mirror)
	t.Logf("mirror before gc: %+v, %d loose refs; after: %+v, %d loose refs", before, refsBefore, after, looseRefs(t, mirror))
	if !m.Collected || m.Before != before {
		t.Errorf("MaintainMirror = %+v, want collected with Before %+v", m, before)
	}
	// One pack of everything reachable, at most one cruft pack of the
	// unreachable objects still in their grace period.
	if after.Packs > 2 || after.Loose != 0 {
		t.Errorf("after gc: %+v, want at most 2 packs and no loose objects", after)
	}
	if n := looseRefs(t, mirror); n != 0 {
		t.Errorf("after gc: %d loose refs, want all packed", n)
	}

	for _, obj := range []string{stagedBlob, young} {
		if _, err := g.run(ctx, call{dir: wt, args: []string{"cat-file", "-e", obj}}); err != nil {
			t.Errorf("object %s is gone after gc: %v", obj, err)
		}
	}
	if _, err := g.run(ctx, call{dir: wt, args: []string{"cat-file", "-e", old}}); err == nil {
		t.Errorf("unreachable object %s older than the grace period survived gc", old)
	}
	if got := mustGit(t, g, wt, "status", "--porcelain=v1"); got != "A  staged.txt" {
		t.Errorf("worktree status after gc = %q, want the staged file", got)
	}
	if got := mustGit(t, g, wt, "log", "--format=%s"); got != "work in the worktree\ninitial" {
		t.Errorf("worktree log after gc = %q", got)
	}
	mustGit(t, g, wt, "commit", "--quiet", "-m", "after gc")
	if got := mustGit(t, g, wt, "show", "HEAD:staged.txt"); got != "staged only" {
		t.Errorf("commit after gc holds staged.txt = %q", got)
	}
	mustGit(t, g, wt, "fsck", "--no-progress", "--no-dangling")

	// Collected, the mirror is under the limits: no gc on every fetch.
	if m, err := g.MaintainMirror(ctx, mirror); err != nil || m.Collected {
		t.Errorf("second MaintainMirror = %+v, %v; want nothing to do", m, err)
	}
}

func hashObject(t *testing.T, g *Git, dir, content string) string {
	t.Helper()
	out, err := g.runStr(context.Background(), call{dir: dir, stdin: strings.NewReader(content),
		args: []string{"hash-object", "-w", "--stdin"}})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func looseObjectPath(gitDir, sha string) string {
	return filepath.Join(gitDir, "objects", sha[:2], sha[2:])
}
