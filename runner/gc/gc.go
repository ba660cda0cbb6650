// Package gc removes old local runs: what `kilroy-bot gc` does.
//
// The model. Every local run leaves a run directory in <data-dir>/runs/
// named by its run id (a ULID), and a branch kilroy/run/<pipeline>/<run-id>
// in the repository it ran in, which its checkpoint.json records
// (repo_dir, branch); its worktree is removed when the run ends, but a run
// that was killed keeps it. A run is old when nothing in its directory
// (checkpoint.json, progress.ndjson, report.md, the stage directories and
// their logs) changed within the window: a running run writes there after
// every node and a log while a node prints, so it is never old, and a run
// left to resume is kept until the window has passed since it stopped.
//
// Collecting an old run removes its worktree, its run branch (only a
// branch in the bot's kilroy/run/ namespace that no worktree has checked
// out) and then its directory. Directories whose name is not a run id are
// never touched.
//
// A server's data dir (Sweep, what serve runs at start and periodically
// and `kilroy-bot gc --data-dir` on demand) is swept by the server
// policy's Retention instead, with the run queue as the judge of what is
// still in use: a run the queue may still work, resume or holds (Queue)
// keeps its directory and branches, however old. Otherwise a run
// directory goes when nothing in it changed for Retention.Runs; a run
// branch kilroy/run/<pipeline>/<run-id> in a mirror when its last
// checkpoint (or the run's start, the time in its id) is older than
// Retention.Branches, and on the remote, opted in, after
// Retention.RemoteBranches; a mirror when nobody fetched into it for
// Retention.Mirrors and it has no worktree and no active run. After
// deleting branches the sweep collects the mirror so their objects leave
// the disk. RemoveTenant deletes what an uninstalled account or removed
// repository left.
package gc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
)

// DefaultOlderThan is how long a run is kept after its last change.
const DefaultOlderThan = 14 * 24 * time.Hour

// Options configure Collect.
type Options struct {
	// RunsDir is the data dir's runs/ directory.
	RunsDir string
	// OlderThan is the window: runs unchanged for longer are removed.
	OlderThan time.Duration
	// Repo, when set, limits Collect to the runs of this repository (its
	// top-level directory).
	Repo string
	// DryRun reports what would be removed and removes nothing.
	DryRun bool
	// Git deletes branches and worktrees (required).
	Git *gitops.Git
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Run is one run directory Collect looked at.
type Run struct {
	ID      string
	Dir     string
	Age     time.Duration // since its last change
	RepoDir string        // "" when the run has no checkpoint yet
	Branch  string
	// BranchDeleted says the run branch was deleted (or would be, in a
	// dry run, when it exists).
	BranchDeleted bool
	Err           error // why it could not be removed
}

// Result is what Collect did.
type Result struct {
	Removed []Run // removed, or in a dry run to be removed
	Failed  []Run // old, but not (entirely) removed: see Err
	Kept    int   // runs newer than the window, or of another repository
}

// Collect removes the runs in opts.RunsDir older than opts.OlderThan.
// Its error is for a runs directory it cannot read; a run it cannot
// remove is in Result.Failed and the others are still collected.
func Collect(ctx context.Context, opts Options) (Result, error) {
	if opts.Git == nil {
		return Result{}, errors.New("gc: no git")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	var res Result
	entries, err := os.ReadDir(opts.RunsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return res, nil
	}
	if err != nil {
		return res, fmt.Errorf("gc: read %s: %w", opts.RunsDir, err)
	}
	now := opts.Now()
	for _, e := range entries {
		if !e.IsDir() || !isRunID(e.Name()) {
			continue
		}
		r := Run{ID: e.Name(), Dir: filepath.Join(opts.RunsDir, e.Name())}
		r.Age = now.Sub(lastChange(r.Dir))
		r.RepoDir, r.Branch = recorded(r.Dir)
		if r.Age <= opts.OlderThan || !sameRepo(opts.Repo, r.RepoDir) {
			res.Kept++
			continue
		}
		if r.Err = collect(ctx, opts, &r); r.Err != nil {
			res.Failed = append(res.Failed, r)
			continue
		}
		res.Removed = append(res.Removed, r)
	}
	return res, nil
}

// collect removes one old run: worktree, branch, directory.
func collect(ctx context.Context, opts Options, r *Run) error {
	repoOK := r.RepoDir != "" && isDir(r.RepoDir)
	if opts.DryRun {
		if repoOK && r.Branch != "" {
			tip, err := opts.Git.BranchTip(ctx, r.RepoDir, r.Branch)
			r.BranchDeleted = err == nil && tip != ""
		}
		return nil
	}
	if repoOK {
		// Parallel branches' worktrees first; RemoveWorktree's prune then
		// drops their registrations too.
		if err := os.RemoveAll(filepath.Join(r.Dir, "branches")); err != nil {
			return fmt.Errorf("remove parallel worktrees: %w", err)
		}
		if err := opts.Git.RemoveWorktree(ctx, r.RepoDir, filepath.Join(r.Dir, "worktree")); err != nil {
			return err
		}
		if r.Branch != "" {
			deleted, err := opts.Git.DeleteRunBranch(ctx, r.RepoDir, r.Branch)
			if err != nil {
				return err
			}
			r.BranchDeleted = deleted
		}
	}
	if err := os.RemoveAll(r.Dir); err != nil {
		return fmt.Errorf("remove run directory: %w", err)
	}
	return nil
}

// checkpoint holds what gc reads of checkpoint.json (runner.Checkpoint).
type checkpoint struct {
	RepoDir string `json:"repo_dir"`
	Branch  string `json:"branch"`
}

// recorded is the repository and branch a run's checkpoint.json names;
// empty when it has none (the run stopped before its first checkpoint,
// and its branch, unused, went with it).
func recorded(dir string) (repoDir, branch string) {
	b, err := os.ReadFile(filepath.Join(dir, "checkpoint.json"))
	if err != nil {
		return "", ""
	}
	var cp checkpoint
	if json.Unmarshal(b, &cp) != nil {
		return "", ""
	}
	return cp.RepoDir, cp.Branch
}

// lastChange is the newest modification time of the run directory, its
// files and its stage directories with their files. The worktree is not
// read: a build may leave files of any age there, and a node's activity
// shows in its logs.
func lastChange(dir string) time.Time {
	var newest time.Time
	see := func(path string) []fs.DirEntry {
		if st, err := os.Stat(path); err == nil && st.ModTime().After(newest) {
			newest = st.ModTime()
		}
		entries, _ := os.ReadDir(path)
		return entries
	}
	for _, e := range see(dir) {
		if e.Name() == "worktree" || e.Name() == "branches" || e.Name() == "policy-managed-roots" || e.Name() == "home" {
			continue
		}
		sub := see(filepath.Join(dir, e.Name()))
		if e.Name() != "nodes" {
			continue
		}
		for _, stage := range sub {
			for _, f := range see(filepath.Join(dir, "nodes", stage.Name())) {
				see(filepath.Join(dir, "nodes", stage.Name(), f.Name()))
			}
		}
	}
	return newest
}

// sameRepo reports whether a run of runRepo is in scope of repo ("" is
// every repository).
func sameRepo(repo, runRepo string) bool {
	if repo == "" {
		return true
	}
	return runRepo != "" && canonical(repo) == canonical(runRepo)
}

func canonical(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	return p
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// isRunID reports whether name is a run id: a ULID in upper case.
func isRunID(name string) bool {
	_, err := ulid.ParseStrict(name)
	return err == nil && !slices.ContainsFunc([]byte(name), func(c byte) bool { return 'a' <= c && c <= 'z' })
}
