package server

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/internal/gittest"
	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
)

// packCount is the number of packs `git count-objects -v` reports.
func packCount(t *testing.T, gitDir string) int {
	t.Helper()
	for _, line := range strings.Split(gittest.Git(t, gitDir, "count-objects", "-v"), "\n") {
		if v, ok := strings.CutPrefix(line, "packs: "); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("count-objects -v printed no pack count")
	return 0
}

// TestFetchPRCollectsMirror: a mirror that many fetches left with a pack
// each is collected by the next fetchPR, and a run worktree made from the
// mirror before that keeps working: status, log and a new commit.
func TestFetchPRCollectsMirror(t *testing.T) {
	ctx := context.Background()
	upstream := gittest.NewRepo(t, map[string]string{"main.go": "package main\n"})
	head := gittest.CommitFiles(t, upstream, "change", map[string]string{"b.txt": "b\n"})
	gittest.Git(t, upstream, "update-ref", "refs/pull/1/head", head)
	repo := Repo{Owner: "octo", Name: "widgets", FullName: "octo/widgets", CloneURL: "file://" + upstream}

	s := &Server{o: ServerOptions{DataDir: t.TempDir()}, log: slog.New(slog.DiscardHandler)}
	g, err := gitops.New(gitops.Options{GitPath: gittest.Path(t), PATH: os.Getenv("PATH"),
		HomeDir: filepath.Join(t.TempDir(), "home"), AllowFileProtocol: true})
	if err != nil {
		t.Fatal(err)
	}
	f, err := s.fetchPR(ctx, g, repo, 1, head, "main")
	if err != nil {
		t.Fatal(err)
	}

	// A run's worktree, made from the mirror as prepare does.
	wt := filepath.Join(t.TempDir(), "worktree")
	if err := g.AddWorktree(ctx, f.mirror, wt, gitops.RunBranch("ci", "r1"), head); err != nil {
		t.Fatal(err)
	}
	gittest.CommitFiles(t, wt, "checkpoint", map[string]string{"out.txt": "built\n"})
	gittest.WriteFile(t, filepath.Join(wt, "staged.txt"), "staged\n")
	gittest.Git(t, wt, "add", "staged.txt")

	// Fetches of 100 objects or more keep their pack; unpackLimit=1 makes
	// each of these small ones do the same (and gc.auto=0 stops the test's
	// own git from collecting them).
	for i := range 60 {
		gittest.CommitFiles(t, upstream, fmt.Sprintf("upstream %d", i), map[string]string{"n.txt": strconv.Itoa(i)})
		gittest.Git(t, f.mirror, "-c", "fetch.unpackLimit=1", "-c", "gc.auto=0", "fetch", "--quiet", "--no-tags", "file://"+upstream,
			fmt.Sprintf("+refs/heads/main:refs/remotes/test/%d", i))
	}
	before := packCount(t, f.mirror)
	if _, err := s.fetchPR(ctx, g, repo, 1, head, "main"); err != nil {
		t.Fatal(err)
	}
	after := packCount(t, f.mirror)
	t.Logf("mirror packs before the fetch: %d, after: %d", before, after)
	if before < 60 || after > 2 {
		t.Errorf("mirror packs %d before the fetch, %d after; want at least 60, then at most 2", before, after)
	}

	if got := gittest.Git(t, wt, "status", "--porcelain=v1"); got != "A  staged.txt" {
		t.Errorf("worktree status after gc = %q, want the staged file", got)
	}
	if got := gittest.Git(t, wt, "log", "--format=%s"); got != "checkpoint\nchange\ninitial" {
		t.Errorf("worktree log after gc = %q", got)
	}
	gittest.Git(t, wt, "commit", "--quiet", "-m", "after gc")
	if got := gittest.Git(t, wt, "show", "HEAD:staged.txt"); got != "staged" {
		t.Errorf("commit after gc: staged.txt = %q", got)
	}
	gittest.Git(t, wt, "fsck", "--no-progress", "--no-dangling")
}
