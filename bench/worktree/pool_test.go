package worktree

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/bench/internal/fixture"
	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
	"github.com/kilroy-bot/kilroy-bot/runner/wtpool"
)

// BenchmarkPooledRun times a pull request run's way to a ready worktree
// as BenchmarkMirrorRun does, with the pool of warm worktrees the server
// keeps: the first run of a repository (no mirror, nothing parked) adds
// its worktree, checking out every file; when it ends its worktree is
// parked (untimed: the server parks after the run's checks are complete;
// reported as park-ms); the second run, after the pull request got one
// more commit, takes the parked worktree and moves it to the new commit,
// writing only the changed files after cleaning it. Each round is one
// such pair from an empty data dir of its own. Reported: the medians, second/first
// and the median, minimum and maximum of the per-pair ratios; take-ms is
// the part of the second run that Pool.Take took.
func BenchmarkPooledRun(b *testing.B) {
	g := newGit(b)
	tmp := b.TempDir()
	origin := buildRepo(b, g, filepath.Join(tmp, "origin"))
	heads := pushes(b, g, origin)
	url := "file://" + origin.Dir
	ctx := context.Background()

	var first, second, park, take []time.Duration
	round := 0
	defer b.ReportMetric(fixture.WaitForDisk(b), "create-us")
	for b.Loop() {
		b.StopTimer()
		round++
		data := filepath.Join(tmp, fmt.Sprintf("data%d", round))
		pool := newPool(b, data)
		rd := func(i int) string { return filepath.Join(data, "runs", fmt.Sprintf("r%d-%d", round, i)) }

		setPull(b, g, origin, heads[0])
		b.StartTimer()
		start := time.Now()
		mirror := prepareFromMirror(b, data, rd(0), url, heads[0], addWorktree)
		first = append(first, time.Since(start))
		b.StopTimer()

		start = time.Now()
		if err := pool.Put(ctx, mirror, filepath.Join(rd(0), "worktree"), heads[0]); err != nil {
			b.Fatal(err)
		}
		park = append(park, time.Since(start))

		setPull(b, g, origin, heads[1])
		b.StartTimer()
		start = time.Now()
		prepareFromMirror(b, data, rd(1), url, heads[1], takeFrom(pool, &take))
		second = append(second, time.Since(start))
		b.StopTimer()

		// Each round's data dir stays until the end: on ext4 without a
		// journal, creating files is several times slower for about half
		// a minute after many were deleted (it skips recently deleted
		// inodes one by one), which would slow the next round's first
		// run, not its second.
		b.StartTimer()
	}
	fixture.Report(b, "second", second, "first", first)
	b.ReportMetric(float64(fixture.Median(park))/float64(time.Millisecond), "park-ms")
	b.ReportMetric(float64(fixture.Median(take))/float64(time.Millisecond), "take-ms")
}

func newPool(b *testing.B, data string) *wtpool.Pool {
	b.Helper()
	git, err := gitops.New(gitops.Options{PATH: os.Getenv("PATH"), HomeDir: filepath.Join(data, "pool-home")})
	if err != nil {
		b.Fatal(err)
	}
	p, err := wtpool.New(wtpool.Options{Dir: filepath.Join(data, "pool"), Git: git})
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// takeFrom makes the worktree from the pool, appending the time Take took
// to took; the benchmark fails when the pool has none (it would time a
// fresh worktree instead).
func takeFrom(pool *wtpool.Pool, took *[]time.Duration) worktreeMaker {
	return func(ctx context.Context, _ *gitops.Git, mirror, wt, branch, head string) error {
		start := time.Now()
		err := pool.Take(ctx, mirror, wt, branch, head)
		*took = append(*took, time.Since(start))
		return err
	}
}

func setPull(b *testing.B, g *fixture.Git, origin *fixture.Repo, head string) {
	b.Helper()
	if _, err := g.Run(origin.Dir, nil, "update-ref", pullRef, head); err != nil {
		b.Fatal(err)
	}
}
