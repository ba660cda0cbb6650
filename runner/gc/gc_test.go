package gc_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/runner/gc"
	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const (
	oldRun     = "01HZZZZZZZZZZZZZZZZZZZZZ01"
	recentRun  = "01HZZZZZZZZZZZZZZZZZZZZZ02"
	otherRepo  = "01HZZZZZZZZZZZZZZZZZZZZZ03"
	noCheckpt  = "01HZZZZZZZZZZZZZZZZZZZZZ04"
	goneRepo   = "01HZZZZZZZZZZZZZZZZZZZZZ05"
	resumable  = "01HZZZZZZZZZZZZZZZZZZZZZ06"
	notARun    = "other-run"
	twentyDays = 20 * 24 * time.Hour
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.test",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.test")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func newRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "first")
	return dir
}

// fixture is a data dir's runs/ with runs of two repositories.
type fixture struct {
	t             *testing.T
	g             *gitops.Git
	runs          string
	repo, another string
}

// run makes run id of repo: a worktree on its run branch with one
// checkpoint, checkpoint.json naming them, and every file age old.
func (f fixture) run(id, repo string, age time.Duration, checkpointed bool) {
	t := f.t
	dir := filepath.Join(f.runs, id)
	branch := gitops.RunBranch("ci", id)
	if repo != "" {
		base := git(t, repo, "rev-parse", "HEAD")
		if err := f.g.AddWorktree(context.Background(), repo, filepath.Join(dir, "worktree"), branch, base); err != nil {
			t.Fatal(err)
		}
		git(t, filepath.Join(dir, "worktree"), "commit", "-q", "--allow-empty", "-m", "checkpoint")
	}
	write := func(name, content string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if checkpointed {
		cp, _ := json.Marshal(map[string]any{"run_id": id, "repo_dir": repo, "branch": branch})
		write("checkpoint.json", string(cp))
	}
	write("progress.ndjson", "{}\n")
	write("nodes/build/stdout.log", "ok\n")
	setAge(t, dir, age)
}

// setAge dates everything under dir but the worktree age before now.
func setAge(t *testing.T, dir string, age time.Duration) {
	t.Helper()
	when := now.Add(-age)
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "worktree" {
			return filepath.SkipDir
		}
		return os.Chtimes(p, when, when)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func newFixture(t *testing.T) fixture {
	g, err := gitops.New(gitops.Options{PATH: os.Getenv("PATH"), HomeDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{t: t, g: g, runs: filepath.Join(t.TempDir(), "runs"), repo: newRepo(t), another: newRepo(t)}
	f.run(oldRun, f.repo, twentyDays, true)
	f.run(recentRun, f.repo, time.Hour, true)
	f.run(resumable, f.repo, 13*24*time.Hour, true) // interrupted 13 days ago: still resumable
	f.run(otherRepo, f.another, twentyDays, true)
	f.run(noCheckpt, "", twentyDays, false)
	gone := newRepo(t)
	f.run(goneRepo, gone, twentyDays, true)
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(f.runs, notARun), 0o755); err != nil {
		t.Fatal(err)
	}
	setAge(t, filepath.Join(f.runs, notARun), twentyDays)
	return f
}

// state is what is left: run directories and the run branches of both
// repositories.
func (f fixture) state() []string {
	var out []string
	entries, _ := os.ReadDir(f.runs)
	for _, e := range entries {
		out = append(out, "dir "+e.Name())
	}
	for _, repo := range []string{f.repo, f.another} {
		for _, b := range strings.Fields(git(f.t, repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/kilroy")) {
			out = append(out, "branch "+b[strings.LastIndex(b, "/")+1:])
		}
	}
	slices.Sort(out)
	return out
}

func TestCollect(t *testing.T) {
	all := []string{"branch " + oldRun, "branch " + otherRepo, "branch " + recentRun, "branch " + resumable,
		"dir " + oldRun, "dir " + otherRepo, "dir " + noCheckpt, "dir " + goneRepo, "dir " + recentRun, "dir " + resumable, "dir " + notARun}
	tests := []struct {
		name        string
		repo        bool // limit to f.repo
		dryRun      bool
		wantRemoved []string
		wantLeft    []string
	}{
		{
			name:        "every repository",
			wantRemoved: []string{oldRun, otherRepo, noCheckpt, goneRepo},
			wantLeft:    []string{"branch " + recentRun, "branch " + resumable, "dir " + recentRun, "dir " + resumable, "dir " + notARun},
		},
		{
			name:        "one repository",
			repo:        true,
			wantRemoved: []string{oldRun},
			wantLeft: []string{"branch " + otherRepo, "branch " + recentRun, "branch " + resumable,
				"dir " + otherRepo, "dir " + noCheckpt, "dir " + goneRepo, "dir " + recentRun, "dir " + resumable, "dir " + notARun},
		},
		{
			name:        "dry run",
			dryRun:      true,
			wantRemoved: []string{oldRun, otherRepo, noCheckpt, goneRepo},
			wantLeft:    slices.Clone(all),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			opts := gc.Options{RunsDir: f.runs, OlderThan: gc.DefaultOlderThan, Git: f.g, DryRun: tt.dryRun, Now: func() time.Time { return now }}
			if tt.repo {
				opts.Repo = f.repo
			}
			res, err := gc.Collect(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			var removed []string
			for _, r := range res.Removed {
				removed = append(removed, r.ID)
			}
			slices.Sort(removed)
			slices.Sort(tt.wantRemoved)
			if diff := cmp.Diff(removed, tt.wantRemoved); diff != "" || len(res.Failed) > 0 {
				t.Errorf("removed (-got +want):\n%s\nfailed: %+v", diff, res.Failed)
			}
			slices.Sort(tt.wantLeft)
			if diff := cmp.Diff(f.state(), tt.wantLeft); diff != "" {
				t.Errorf("left (-got +want):\n%s", diff)
			}
			if wt := git(t, f.repo, "worktree", "list"); !tt.dryRun && strings.Contains(wt, oldRun) {
				t.Errorf("the old run's worktree is still registered:\n%s", wt)
			}
		})
	}
}

// TestCollectKeepsALiveRun: a run whose directory is old but whose node
// is still writing its log is not collected.
func TestCollectKeepsALiveRun(t *testing.T) {
	f := newFixture(t)
	log := filepath.Join(f.runs, oldRun, "nodes", "build", "stdout.log")
	if err := os.Chtimes(log, now.Add(-time.Minute), now.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	res, err := gc.Collect(context.Background(), gc.Options{RunsDir: f.runs, OlderThan: gc.DefaultOlderThan, Git: f.g, Repo: f.repo,
		Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Removed) != 0 {
		t.Errorf("removed %+v, want nothing: the run's node wrote a minute ago", res.Removed)
	}
}
