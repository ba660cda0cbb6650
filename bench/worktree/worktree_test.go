package worktree

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/bench/internal/fixture"
	"github.com/kilroy-bot/kilroy-bot/policy"
	"github.com/kilroy-bot/kilroy-bot/runner"
	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

// The repository: 20,000 files, 300 commits.
const (
	trackedFiles     = 20000
	commits          = 300
	changesPerCommit = 30

	graphPath = ".kilroy/ci.dot"
	pullRef   = "refs/pull/1/head"
)

const pipeline = "digraph ci {\n  start [shape=Mdiamond]\n  exit [shape=Msquare]\n  start -> exit\n}\n"

func buildRepo(b *testing.B, g *fixture.Git, dir string) *fixture.Repo {
	b.Helper()
	r, err := fixture.BuildRepo(g, dir, fixture.RepoSpec{Files: trackedFiles, Seed: 2, Commits: commits,
		Changes: changesPerCommit, Extra: map[string]string{".gitignore": fixture.Gitignore, graphPath: pipeline}})
	if err != nil {
		b.Fatal(err)
	}
	return r
}

func newGit(b *testing.B) *fixture.Git {
	b.Helper()
	g, err := fixture.NewGit(filepath.Join(b.TempDir(), "home"))
	if err != nil {
		b.Skip(err)
	}
	return g
}

// BenchmarkMirrorRun times a pull request run's way to a ready worktree,
// as Server.HandleRun prepares it minus the GitHub calls, for the first
// run of a repository (no mirror yet) and then a second run of it after
// the pull request got one more commit. Every round starts from an empty
// data dir. Reported: the median of each, in milliseconds, and
// second/first.
func BenchmarkMirrorRun(b *testing.B) {
	g := newGit(b)
	tmp := b.TempDir()
	origin := buildRepo(b, g, filepath.Join(tmp, "origin"))
	heads := pushes(b, g, origin)
	url := "file://" + origin.Dir

	var first, second []time.Duration
	round := 0
	defer b.ReportMetric(fixture.WaitForDisk(b), "create-us")
	for b.Loop() {
		b.StopTimer()
		round++
		data := filepath.Join(tmp, fmt.Sprintf("data%d", round))
		var rd [2]string
		for i, head := range heads {
			if _, err := g.Run(origin.Dir, nil, "update-ref", pullRef, head); err != nil {
				b.Fatal(err)
			}
			rd[i] = filepath.Join(data, "runs", fmt.Sprintf("r%d-%d", round, i))
			b.StartTimer()
			start := time.Now()
			mirror := prepareFromMirror(b, data, rd[i], url, head, addWorktree)
			d := time.Since(start)
			b.StopTimer()
			if i == 0 {
				first = append(first, d)
			} else {
				second = append(second, d)
			}
			removeWorktree(b, mirror, filepath.Join(rd[i], "worktree"))
		}
		if err := os.RemoveAll(data); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	fixture.Report(b, "second", second, "first", first)
}

// pushes makes two pushes to the pull request, each changing a few files,
// and returns their commits.
func pushes(b *testing.B, g *fixture.Git, origin *fixture.Repo) []string {
	b.Helper()
	heads := make([]string, 2)
	parent := origin.Head
	for i := range heads {
		files := map[string][]byte{}
		for k := range 5 {
			p := origin.Paths[i*100+k]
			files[p] = fixture.Content(p, commits+i)
		}
		sha, err := fixture.Commit(g, origin.Dir, fmt.Sprintf("refs/bench/push%d", i), parent, "push", files)
		if err != nil {
			b.Fatal(err)
		}
		heads[i], parent = sha, sha
	}
	return heads
}

// prepareFromMirror is the git side of a pull request run's prepare: a Git
// with the run's own HOME, the repository's mirror made if missing and
// fetched (base branch and PR head), the head resolved, the pipeline read
// from it, a worktree of it added on the run branch and the artifact
// policy resolved in that worktree. It returns the mirror. The worktree
// is made by makeWorktree: added (addWorktree), or taken from a pool.
func prepareFromMirror(b *testing.B, data, runDir, url, head string, makeWorktree worktreeMaker) string {
	b.Helper()
	ctx := context.Background()
	git, err := gitops.New(gitops.Options{PATH: os.Getenv("PATH"), HomeDir: filepath.Join(runDir, "home"), AllowFileProtocol: true})
	if err != nil {
		b.Fatal(err)
	}
	mirror := filepath.Join(data, "mirrors", "bench", "repo.git")
	if err := git.EnsureMirror(ctx, mirror, url); err != nil {
		b.Fatal(err)
	}
	if err := git.Fetch(ctx, mirror, url, "+refs/heads/main:refs/remotes/origin/main", "+"+pullRef+":refs/remotes/pull/1/head"); err != nil {
		b.Fatal(err)
	}
	if _, err := git.ResolveRef(ctx, mirror, head); err != nil {
		b.Fatal(err)
	}
	if _, err := git.ReadFileAt(ctx, mirror, head, graphPath, 1<<20); err != nil {
		b.Fatal(err)
	}
	wt := filepath.Join(runDir, "worktree")
	if err := makeWorktree(ctx, git, mirror, wt, gitops.RunBranch("ci", filepath.Base(runDir)), head); err != nil {
		b.Fatal(err)
	}
	if _, err := policy.Resolve(policy.ResolveInput{Repo: os.DirFS(wt), RunDir: runDir, HostEnv: sandbox.HostEnv()}); err != nil {
		b.Fatal(err)
	}
	return mirror
}

// worktreeMaker makes a run's worktree at wt on branch at head.
type worktreeMaker func(ctx context.Context, git *gitops.Git, mirror, wt, branch, head string) error

// addWorktree makes a fresh worktree, checking out every file.
func addWorktree(ctx context.Context, git *gitops.Git, mirror, wt, branch, head string) error {
	return git.AddWorktree(ctx, mirror, wt, branch, head)
}

// BenchmarkLocalRun times runner.PrepareLocal, a local run up to its first
// node, twice per round on the same repository. Reported: the median of
// each, in milliseconds, and second/first.
func BenchmarkLocalRun(b *testing.B) {
	g := newGit(b)
	tmp := b.TempDir()
	repo := buildRepo(b, g, filepath.Join(tmp, "repo"))
	host := sandbox.HostEnv()

	var first, second []time.Duration
	round := 0
	defer b.ReportMetric(fixture.WaitForDisk(b), "create-us")
	for b.Loop() {
		b.StopTimer()
		round++
		for i := range 2 {
			runDir := filepath.Join(tmp, "runs", fmt.Sprintf("r%d-%d", round, i))
			b.StartTimer()
			start := time.Now()
			p, err := runner.PrepareLocal(context.Background(), runner.LocalOptions{
				RepoDir: repo.Dir, RunDir: runDir, GitPath: g.Path(), Env: runner.EnvInputs{Host: host}})
			d := time.Since(start)
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			if i == 0 {
				first = append(first, d)
			} else {
				second = append(second, d)
			}
			removeWorktree(b, repo.Dir, p.Dir.Worktree())
		}
		b.StartTimer()
	}
	fixture.Report(b, "second", second, "first", first)
}

// removeWorktree ends a run between measurements, so worktrees do not pile
// up in the repository and slow the next one down.
func removeWorktree(b *testing.B, repo, wt string) {
	b.Helper()
	git, err := gitops.New(gitops.Options{PATH: os.Getenv("PATH"), HomeDir: filepath.Join(filepath.Dir(wt), "home")})
	if err != nil {
		b.Fatal(err)
	}
	if err := git.RemoveWorktree(context.Background(), repo, wt); err != nil {
		b.Fatal(err)
	}
}
