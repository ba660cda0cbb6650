package gitops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// treeBomb writes into repo a commit of a few objects whose tree has
// width^levels files: width copies of one tree of width copies of ... one
// one-byte blob, built with git mktree.
func treeBomb(t testing.TB, g *Git, repo string, width, levels int) string {
	t.Helper()
	ctx := context.Background()
	run := func(stdin string, args ...string) string {
		out, err := g.runStr(ctx, call{dir: repo, args: args, stdin: strings.NewReader(stdin)})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	blob := run("x", "hash-object", "-w", "--stdin")
	list := func(mode, kind, id, prefix string) string {
		var b strings.Builder
		for i := range width {
			fmt.Fprintf(&b, "%s %s %s\t%s%06d\n", mode, kind, id, prefix, i)
		}
		return b.String()
	}
	tree := run(list("100644", "blob", blob, "f"), "mktree")
	for range levels - 1 {
		tree = run(list("040000", "tree", tree, "d"), "mktree")
	}
	return run("", "commit-tree", tree, "-m", "a bomb")
}

// TestMeasureTree: the files and bytes of a commit's tree, symbolic links
// counted as files and submodules as nothing, without a checkout.
func TestMeasureTree(t *testing.T) {
	g := newTestGit(t)
	repo := newRepo(t, g, map[string]string{"a.txt": "hello\n", "dir/b.txt": "12345", "dir/sub/c": ""})
	if err := os.Symlink("a.txt", filepath.Join(repo, "link")); err != nil {
		t.Fatal(err)
	}
	mustGit(t, g, repo, "add", "--all")
	mustGit(t, g, repo, "update-index", "--add", "--cacheinfo", "160000,"+mustGit(t, g, repo, "rev-parse", "HEAD")+",module")
	mustGit(t, g, repo, "commit", "--quiet", "-m", "link and submodule")
	got, err := g.MeasureTree(context.Background(), repo, "HEAD", TreeLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, TreeSize{Files: 4, Bytes: 6 + 5 + 0 + 5}); diff != "" {
		t.Errorf("MeasureTree (-got +want):\n%s", diff)
	}
	if _, err := g.MeasureTree(context.Background(), repo, "HEAD", TreeLimits{MaxFiles: 4, MaxBytes: 16}); err != nil {
		t.Errorf("a tree at its limits: %v", err)
	}
	_, err = g.MeasureTree(context.Background(), repo, "HEAD", TreeLimits{MaxBytes: 15})
	if tl, ok := errors.AsType[*TreeTooLargeError](err); !ok || tl.FilesOver() || !strings.Contains(err.Error(), "more than 15 bytes") {
		t.Errorf("16 bytes against a limit of 15: %v", err)
	}
}

// TestMeasureTreeBomb: a commit of four objects naming a million files
// is measured exactly from its objects, and refused over a lower limit,
// in well under a second either way.
func TestMeasureTreeBomb(t *testing.T) {
	g := newTestGit(t)
	repo := newRepo(t, g, nil)
	bomb := treeBomb(t, g, repo, 1000, 2)
	start := time.Now()
	got, err := g.MeasureTree(context.Background(), repo, bomb, TreeLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, TreeSize{Files: 1_000_000, Bytes: 1_000_000}); diff != "" {
		t.Errorf("MeasureTree (-got +want):\n%s", diff)
	}
	_, err = g.MeasureTree(context.Background(), repo, bomb, TreeLimits{MaxFiles: 500_000})
	tl, ok := errors.AsType[*TreeTooLargeError](err)
	if !ok || !tl.FilesOver() || !strings.Contains(err.Error(), "more than 500000 files") {
		t.Fatalf("a million files against a limit of 500,000: %v", err)
	}
	t.Logf("measured and refused in %s", time.Since(start))
}

// TestMeasureTreeBillion: one level more is a billion paths from five
// objects; the walk still reads five objects.
func TestMeasureTreeBillion(t *testing.T) {
	g := newTestGit(t)
	repo := newRepo(t, g, nil)
	bomb := treeBomb(t, g, repo, 1000, 3)
	got, err := g.MeasureTree(context.Background(), repo, bomb, TreeLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, TreeSize{Files: 1_000_000_000, Bytes: 1_000_000_000}); diff != "" {
		t.Errorf("MeasureTree (-got +want):\n%s", diff)
	}
	if _, err := g.MeasureTree(context.Background(), repo, bomb, TreeLimits{MaxFiles: 1_000_000}); !errors.As(err, new(*TreeTooLargeError)) {
		t.Errorf("a billion files against a limit of a million: %v", err)
	}
}
