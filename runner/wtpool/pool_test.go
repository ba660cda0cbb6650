package wtpool

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
)

func newPool(t *testing.T, g *gitops.Git, mod func(*Options)) *Pool {
	t.Helper()
	o := Options{Dir: filepath.Join(t.TempDir(), "pool"), Git: g}
	if mod != nil {
		mod(&o)
	}
	p, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

func TestTakeReusesAParkedWorktree(t *testing.T) {
	ctx := context.Background()
	g := newGit(t)
	r := newRepo(t, 3)
	p := newPool(t, g, nil)
	if err := p.Take(ctx, r.dir, filepath.Join(t.TempDir(), "wt"), gitops.RunBranch("ci", "r0"), r.commits[0]); !errors.Is(err, ErrEmpty) {
		t.Fatalf("Take from an empty pool: %v, want ErrEmpty", err)
	}
	wt1 := newRun(t, g, r, "r1", r.commits[0])
	if err := os.WriteFile(filepath.Join(wt1, "junk"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := p.Put(ctx, r.dir, wt1, r.commits[0]); err != nil {
		t.Fatal(err)
	}
	if exists(wt1) || p.Len(r.dir) != 1 {
		t.Fatalf("after Put: worktree still at %s (%v) or pool holds %d, want 1", wt1, exists(wt1), p.Len(r.dir))
	}
	wt2 := filepath.Join(t.TempDir(), "r2", "worktree")
	branch := gitops.RunBranch("ci", "r2")
	if err := p.Take(ctx, r.dir, wt2, branch, r.commits[2]); err != nil {
		t.Fatal(err)
	}
	got := []string{git(t, wt2, "symbolic-ref", "HEAD"), git(t, wt2, "rev-parse", "HEAD"),
		git(t, wt2, "status", "--porcelain", "--ignored", "--untracked-files=all")}
	if diff := cmp.Diff(got, []string{"refs/heads/" + branch, r.commits[2], ""}); diff != "" {
		t.Errorf("reused worktree: HEAD, commit, status (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(worktrees(t, r), []string{wt2}); diff != "" {
		t.Errorf("worktrees of the repository (-got +want):\n%s", diff)
	}
	if err := p.Take(ctx, r.dir, filepath.Join(t.TempDir(), "wt"), gitops.RunBranch("ci", "r3"), r.commits[2]); !errors.Is(err, ErrEmpty) {
		t.Errorf("second Take: %v, want ErrEmpty (the only worktree was taken)", err)
	}
}

// TestConcurrentTakesGetDifferentWorktrees: two runs of one repository
// starting at once each get a worktree of their own.
func TestConcurrentTakesGetDifferentWorktrees(t *testing.T) {
	ctx := context.Background()
	g := newGit(t)
	r := newRepo(t, 2)
	p := newPool(t, g, nil)
	for _, id := range []string{"r1", "r2"} {
		if err := p.Put(ctx, r.dir, newRun(t, g, r, id, r.commits[0]), r.commits[0]); err != nil {
			t.Fatal(err)
		}
	}
	dests := []string{filepath.Join(t.TempDir(), "a", "worktree"), filepath.Join(t.TempDir(), "b", "worktree")}
	errs := make([]error, len(dests))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, d := range dests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = p.Take(ctx, r.dir, d, gitops.RunBranch("ci", "t"+string(rune('a'+i))), r.commits[1])
		}()
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	admins := map[string]bool{}
	for _, d := range dests {
		admins[git(t, d, "rev-parse", "--absolute-git-dir")] = true
		if st := git(t, d, "status", "--porcelain", "--ignored"); st != "" {
			t.Errorf("%s: status %q", d, st)
		}
	}
	want := slices.Sorted(slices.Values(dests))
	if diff := cmp.Diff(worktrees(t, r), want); diff != "" || len(admins) != 2 {
		t.Errorf("worktrees (-got +want):\n%s\nregistrations: %v", diff, admins)
	}
	if n := p.Len(""); n != 0 {
		t.Errorf("pool holds %d after two takes, want 0", n)
	}
}

func TestPutKeepsBounds(t *testing.T) {
	ctx := context.Background()
	g := newGit(t)
	a, b := newRepo(t, 1), newRepo(t, 1)
	p := newPool(t, g, func(o *Options) { o.PerRepo, o.Total = 2, 3 })
	put := func(r repo, id string) {
		t.Helper()
		if err := p.Put(ctx, r.dir, newRun(t, g, r, id, r.commits[0]), r.commits[0]); err != nil {
			t.Fatal(err)
		}
	}
	type counts struct{ A, B, APruned, BPruned int }
	check := func(want counts) {
		t.Helper()
		got := counts{p.Len(a.dir), p.Len(b.dir), len(worktrees(t, a)), len(worktrees(t, b))}
		if diff := cmp.Diff(got, want); diff != "" {
			t.Errorf("parked and registered worktrees (-got +want):\n%s", diff)
		}
	}
	put(a, "a1")
	put(a, "a2")
	put(a, "a3") // over PerRepo: a1 goes
	check(counts{A: 2, APruned: 2})
	put(b, "b1")
	put(b, "b2") // over Total: the oldest of all, a2, goes
	check(counts{A: 1, B: 2, APruned: 1, BPruned: 2})
}

func TestIdleWorktreesAreRemoved(t *testing.T) {
	ctx := context.Background()
	g := newGit(t)
	r := newRepo(t, 1)
	p := newPool(t, g, func(o *Options) { o.Idle = 20 * time.Millisecond })
	if err := p.Put(ctx, r.dir, newRun(t, g, r, "r1", r.commits[0]), r.commits[0]); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for p.Len(r.dir) > 0 || len(worktrees(t, r)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("idle worktree still parked (%d) or registered (%v)", p.Len(r.dir), worktrees(t, r))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestNewRemovesWhatAnEarlierProcessParked(t *testing.T) {
	ctx := context.Background()
	g := newGit(t)
	r := newRepo(t, 1)
	dir := filepath.Join(t.TempDir(), "pool")
	old, err := New(Options{Dir: dir, Git: g})
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Put(ctx, r.dir, newRun(t, g, r, "r1", r.commits[0]), r.commits[0]); err != nil {
		t.Fatal(err)
	}
	if len(worktrees(t, r)) != 1 {
		t.Fatalf("parked worktree not registered (or pruned while locked): %v", worktrees(t, r))
	}
	if _, err := New(Options{Dir: dir, Git: g}); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 || len(worktrees(t, r)) != 0 {
		t.Errorf("after New: pool dir holds %d entries, repository registers %v; want none", len(entries), worktrees(t, r))
	}
}

// TestUnusableWorktreeIsRemoved: a parked worktree whose index cannot be
// trusted is removed when taken, and Take says so (the run then makes a
// fresh worktree).
func TestUnusableWorktreeIsRemoved(t *testing.T) {
	ctx := context.Background()
	g := newGit(t)
	r := newRepo(t, 2)
	p := newPool(t, g, nil)
	wt := newRun(t, g, r, "r1", r.commits[0])
	admin := git(t, wt, "rev-parse", "--absolute-git-dir")
	if err := p.Put(ctx, r.dir, wt, r.commits[0]); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(admin, "index"), []byte("DIRC\x00\x00\x00\x04 not an index we keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "r2", "worktree")
	err := p.Take(ctx, r.dir, dest, gitops.RunBranch("ci", "r2"), r.commits[1])
	if !errors.Is(err, gitops.ErrNotReusable) {
		t.Fatalf("Take: %v, want ErrNotReusable", err)
	}
	if exists(dest) || len(worktrees(t, r)) != 0 || p.Len("") != 0 {
		t.Errorf("unusable worktree left: at dest %v, registered %v, parked %d", exists(dest), worktrees(t, r), p.Len(""))
	}
}
