package checkpoint

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/bench/internal/fixture"
	"github.com/kilroy-bot/kilroy-bot/policy"
	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

// The shape: 20,000 tracked files, 100,000 ignored, 250 changed
// paths per checkpoint.
const (
	trackedFiles = 20000
	ignoredFiles = 100000

	modifiedPaths = 170
	addedPaths    = 25
	deletedPaths  = 25
	excludedPaths = 30 // half under .cargo-target-bench/, half under __pycache__/
	changedPaths  = modifiedPaths + addedPaths + deletedPaths + excludedPaths

	// deletePool is how many tracked files are kept aside for deletion, so
	// a deleted file is never also picked for modification; it bounds the
	// number of rounds.
	deletePool = 5000
	maxRounds  = deletePool / deletedPaths
)

// BenchmarkCheckpoint times, per round and in the same process, the bot's
// Checkpoint (status, exclude filter, update-index, commit, HEAD check)
// in its worktree and `git add -A && git commit -q -m x` in the copy,
// alternating which goes first so neither always runs on the cache the
// other warmed. Reported: the median of each side in milliseconds, the
// ratio of the medians, and the median, minimum and maximum of the
// per-round ratios (each pair ran back to back, so it cancels most of a
// shared machine's drift), from at least minPairs pairs.
// ns/op is the two sides together and means little on its own.
func BenchmarkCheckpoint(b *testing.B) {
	f := newSides(b)
	defer b.ReportMetric(fixture.WaitForDisk(b, f.gitDir, filepath.Join(f.plain, ".git")), "create-us")
	// One untimed round settles both indexes: the worktree's was just
	// written by checkout and the copy's carries the original's inode
	// numbers, so each side re-hashes every file once. It runs after the
	// wait for the disk, which can take minutes, so that the timed rounds
	// start on what it read: a machine that reclaims memory pages idle
	// for a minute (bench/README.md) would otherwise make the first
	// rounds read the fixture's inodes from disk, on whichever side went
	// first.
	f.round(b)
	var bot, plain []time.Duration
	for b.Loop() {
		b.StopTimer()
		f.change(b)
		b.StartTimer()
		var tb, tp time.Duration
		if f.rounds%2 == 0 {
			tb, tp = f.timeBot(b), f.timePlain(b)
		} else {
			tp, tb = f.timePlain(b), f.timeBot(b)
		}
		b.StopTimer()
		f.check(b)
		bot, plain = append(bot, tb), append(plain, tp)
		b.StartTimer()
	}
	fixture.Report(b, "bot", bot, "plain", plain)
	if len(bot) < minPairs {
		b.Errorf("%d interleaved pairs, fewer than the %d a ratio is quoted from: run with -benchtime %dx or more", len(bot), minPairs, minPairs)
	}
}

// minPairs is the fewest interleaved pairs whose ratio the benchmark
// quotes (median and min-max).
const minPairs = 5

// sides are the two copies of the fixture and what works on each.
type sides struct {
	g       *fixture.Git // plain git: the baseline and the fixture
	bot     *gitops.Git
	wt      string // the bot's worktree
	gitDir  string // the repository's, where the bot's objects go
	plain   string // the baseline's copy
	branch  string
	exclude []string
	pol     *policy.Resolved
	paths   []string // tracked files, in Tree's order
	rounds  int
}

// newSides builds the repository once, then the two identical sides.
func newSides(b *testing.B) *sides {
	b.Helper()
	ctx := context.Background()
	tmp := b.TempDir()
	g, err := fixture.NewGit(filepath.Join(tmp, "home"))
	if err != nil {
		b.Skip(err)
	}
	src, err := fixture.BuildRepo(g, filepath.Join(tmp, "repo"), fixture.RepoSpec{
		Files: trackedFiles, Seed: 1, Extra: map[string]string{".gitignore": fixture.Gitignore}})
	if err != nil {
		b.Fatal(err)
	}
	f := &sides{g: g, wt: filepath.Join(tmp, "run", "worktree"), gitDir: filepath.Join(src.Dir, ".git"),
		plain: filepath.Join(tmp, "plain"), branch: gitops.RunBranch("ci", "bench"), paths: src.Paths}
	// cp -a keeps contents, modes and times: the copy is the repository
	// as it was, .git included.
	if out, err := exec.Command("cp", "-a", src.Dir, f.plain).CombinedOutput(); err != nil {
		b.Fatalf("cp -a: %v: %s", err, out)
	}
	// Automatic gc would fire in the baseline alone, at whichever round
	// crosses its loose-object threshold; the bot runs with it off.
	for _, kv := range [][]string{{"gc.auto", "0"}, {"maintenance.auto", "false"}} {
		if _, err := g.Run(f.plain, nil, "config", kv[0], kv[1]); err != nil {
			b.Fatal(err)
		}
	}
	// The options a local run uses (runner.newGit).
	f.bot, err = gitops.New(gitops.Options{GitPath: g.Path(), PATH: os.Getenv("PATH"),
		HomeDir: filepath.Join(tmp, "run", "home"), RepoIdentity: true})
	if err != nil {
		b.Fatal(err)
	}
	if err := f.bot.AddWorktree(ctx, src.Dir, f.wt, f.branch, src.Head); err != nil {
		b.Fatal(err)
	}
	for _, root := range []string{f.wt, f.plain} {
		if err := fixture.WriteIgnored(root, ignoredFiles); err != nil {
			b.Fatal(err)
		}
	}
	f.pol, err = policy.Resolve(policy.ResolveInput{Repo: os.DirFS(f.wt), RunDir: filepath.Join(tmp, "run"), HostEnv: sandbox.HostEnv()})
	if err != nil {
		b.Fatal(err)
	}
	// As runner's checkpoint host passes them: the resolved globs plus the
	// engine's own run-time file.
	f.exclude = slices.Concat(f.pol.Checkpoint.ExcludeGlobs, []string{attractor.StatusFallbackName})
	return f
}

// round is one untimed change and checkpoint on both sides.
func (f *sides) round(b *testing.B) {
	f.change(b)
	f.timeBot(b)
	f.timePlain(b)
	f.check(b)
}

// change makes this round's changedPaths changes on both sides.
func (f *sides) change(b *testing.B) {
	b.Helper()
	f.rounds++
	r := f.rounds
	if r > maxRounds {
		b.Fatalf("more than %d rounds: lower -benchtime", maxRounds)
	}
	pool := len(f.paths) - deletePool
	writes := map[string][]byte{}
	var deletes []string
	for k := range modifiedPaths {
		p := f.paths[((r-1)*modifiedPaths+k)%pool]
		writes[p] = fixture.Content(p, r)
	}
	for k := range addedPaths {
		// New files land next to existing ones, spread over the tree.
		dir := path.Dir(f.paths[((r-1)*addedPaths+k)*131%pool])
		p := fmt.Sprintf("%s/new_r%d_%d.go", dir, r, k)
		writes[p] = fixture.Content(p, 0)
		deletes = append(deletes, f.paths[len(f.paths)-1-((r-1)*deletedPaths+k)])
	}
	for k := range excludedPaths {
		p := fmt.Sprintf("services/engine/.cargo-target-bench/debug/deps/libengine_%d.rlib", k)
		if k%2 == 1 {
			p = fmt.Sprintf("tools/py/__pycache__/mod%d.cpython-312.pyc", k)
		}
		writes[p] = fmt.Appendf(nil, "build output of round %d\n", r)
	}
	for _, root := range []string{f.wt, f.plain} {
		for p, data := range writes {
			if err := fixture.WriteFile(root, p, data); err != nil {
				b.Fatal(err)
			}
		}
		for _, p := range deletes {
			if err := os.Remove(filepath.Join(root, filepath.FromSlash(p))); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func (f *sides) timeBot(b *testing.B) time.Duration {
	b.Helper()
	start := time.Now()
	res, err := f.bot.Checkpoint(context.Background(), f.wt, gitops.CheckpointSpec{
		RunID: "bench", NodeID: fmt.Sprintf("n%d", f.rounds), Status: "success", Branch: f.branch,
		Exclude: f.exclude, Excluded: f.pol.Excluded})
	d := time.Since(start)
	if err != nil {
		b.Fatal(err)
	}
	if len(res.Staged) != changedPaths-excludedPaths || len(res.Excluded) != excludedPaths {
		b.Fatalf("checkpoint staged %d and excluded %d paths, want %d and %d",
			len(res.Staged), len(res.Excluded), changedPaths-excludedPaths, excludedPaths)
	}
	return d
}

func (f *sides) timePlain(b *testing.B) time.Duration {
	b.Helper()
	start := time.Now()
	if _, err := f.g.Run(f.plain, nil, "add", "-A"); err != nil {
		b.Fatal(err)
	}
	if _, err := f.g.Run(f.plain, nil, "commit", "-q", "-m", "x"); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// check confirms what each side committed this round: the bot every
// change but the excluded ones, plain git all of them (after the first
// round the excluded files are tracked there, so they show as modified).
func (f *sides) check(b *testing.B) {
	b.Helper()
	for _, c := range []struct {
		dir  string
		want int
	}{{f.wt, changedPaths - excludedPaths}, {f.plain, changedPaths}} {
		out, err := f.g.Run(c.dir, nil, "diff-tree", "--no-commit-id", "--name-only", "-r", "HEAD")
		if err != nil {
			b.Fatal(err)
		}
		if got := len(strings.Split(out, "\n")); got != c.want {
			b.Fatalf("round %d: HEAD of %s changes %d paths, want %d", f.rounds, filepath.Base(c.dir), got, c.want)
		}
	}
}
