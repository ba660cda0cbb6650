package gc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
)

// Queue is what the sweep asks the run queue (queue.Queue): which of
// these runs may still be worked, resumed, or are held by a worker
// (nothing of those is ever deleted); and the lock that lets one process
// sharing the queue sweep at a time.
type Queue interface {
	Active(ctx context.Context, ids []string) (map[string]bool, error)
	// TrySweepLock takes the sweep lock, or says (ok false) that another
	// process holds it.
	TrySweepLock(ctx context.Context) (unlock func(), ok bool, err error)
}

// RemoteGit returns a git that authenticates to the remote of a mirror
// (info.CloneURL) with fresh tokens of the installation that reaches
// info.Repo, and what to call when done with it (revoking them).
type RemoteGit func(ctx context.Context, info MirrorInfo) (*gitops.Git, func(), error)

// SweepOptions configure Sweep.
type SweepOptions struct {
	// DataDir is the server's data dir: runs/<run-id>/ and
	// mirrors/<owner>/<name>.git.
	DataDir   string
	Retention Retention
	Queue     Queue
	// Git deletes local branches and worktrees and collects mirrors.
	Git *gitops.Git
	// Remote, when set and Retention.RemoteBranches is not zero, deletes
	// expired run branches on the mirrors' remotes.
	Remote RemoteGit
	// LockMirror holds off the fetches into a mirror and the creation of
	// worktrees from it (the server's own lock) while the sweep deletes
	// or collects it. Without it (another process than the server sweeps)
	// collection keeps unreachable objects younger than an hour.
	LockMirror func(dir string) (unlock func())
	// Unpark, when set, removes the server's parked worktrees of a mirror
	// (its warm pool) before the sweep collects or deletes the mirror:
	// they hold their last run's commit, and any worktree makes the
	// collection keep unreachable objects for two weeks.
	Unpark func(ctx context.Context, dir string)
	// Now is the clock (default time.Now).
	Now func() time.Time
	// DryRun lists in Swept what the sweep would delete and deletes,
	// collects, unparks and locks nothing.
	DryRun bool

	lockedByServer bool // LockMirror was given
}

// Swept is what Sweep removed. Branches are "owner/name kilroy/run/…".
type Swept struct {
	Runs           []string // run ids whose directory was removed
	Branches       []string // run branches deleted in mirrors
	RemoteBranches []string // run branches deleted on remotes
	Mirrors        []string // owner/name of mirrors deleted
	Collected      []string // owner/name of mirrors collected after deletions
	Caches         []string // cache directories removed, relative to caches/
	Failed         []error  // what could not be removed; the next sweep tries again
	// Skipped says another process sharing the queue was sweeping: this
	// pass did nothing.
	Skipped bool
}

// unlockedPruneExpire is the grace for unreachable objects when the sweep
// cannot hold off the server's fetches (`kilroy-bot gc --data-dir` beside
// a running server): far longer than a fetch takes to reference what it
// wrote.
const unlockedPruneExpire = time.Hour

// Sweep removes from a server's data dir what its retention let expire:
// finished runs' directories, their branches in the mirrors and, when
// opted in, on the remotes, and mirrors nobody used; then it collects the
// mirrors it deleted branches in (DryRun: it lists what it would delete).
// It deletes nothing of a run the queue calls active, and never a branch
// outside kilroy/run/. One process
// sharing the queue sweeps at a time (the queue's sweep lock, held for the
// pass): when another holds it, Sweep does nothing and says Skipped. An
// error is for a queue that cannot answer (nothing is deleted then) or an
// unreadable data dir.
func Sweep(ctx context.Context, o SweepOptions) (Swept, error) {
	var res Swept
	if o.Git == nil || o.Queue == nil {
		return res, errors.New("gc: sweep needs a git and a queue")
	}
	if !o.DryRun {
		unlock, ok, err := o.Queue.TrySweepLock(ctx)
		if err != nil {
			return res, fmt.Errorf("gc: sweep lock: %w", err)
		}
		if !ok {
			res.Skipped = true
			return res, nil
		}
		defer unlock()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o.lockedByServer = o.LockMirror != nil
	if o.LockMirror == nil {
		o.LockMirror = func(string) func() { return func() {} }
	}
	dataDir, err := filepath.Abs(o.DataDir)
	if err != nil {
		return res, fmt.Errorf("gc: data dir: %w", err)
	}
	o.DataDir = dataDir
	if err := sweepRuns(ctx, o, &res); err != nil {
		return res, err
	}
	mirrors, err := listMirrors(filepath.Join(o.DataDir, "mirrors"))
	if err != nil {
		return res, err
	}
	for _, m := range mirrors {
		if err := sweepMirror(ctx, o, m, &res); err != nil {
			return res, err
		}
	}
	return res, sweepCaches(o, &res)
}

// sweepRuns removes the expired directories of finished runs.
func sweepRuns(ctx context.Context, o SweepOptions, res *Swept) error {
	runsDir := filepath.Join(o.DataDir, "runs")
	entries, err := os.ReadDir(runsDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("gc: read %s: %w", runsDir, err)
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() && isRunID(e.Name()) {
			ids = append(ids, e.Name())
		}
	}
	active, err := o.Queue.Active(ctx, ids)
	if err != nil {
		return fmt.Errorf("%w: %w", errQueue, err)
	}
	now := o.Now()
	for _, id := range ids {
		dir := filepath.Join(runsDir, id)
		if !expired(lastChange(dir), now, o.Retention.Runs, active[id]) {
			continue
		}
		if o.DryRun {
			res.Runs = append(res.Runs, id)
			continue
		}
		if err := removeRunDir(ctx, o, dir); err != nil {
			res.Failed = append(res.Failed, fmt.Errorf("run %s: %w", id, err))
			continue
		}
		res.Runs = append(res.Runs, id)
	}
	return nil
}

// removeRunDir removes a run directory, its worktrees first so that the
// mirror drops their registrations; the run branch stays for its own
// window.
func removeRunDir(ctx context.Context, o SweepOptions, dir string) error {
	repoDir, _ := recorded(dir)
	if repoDir != "" && isDir(repoDir) {
		if err := os.RemoveAll(filepath.Join(dir, "branches")); err != nil {
			return fmt.Errorf("remove parallel worktrees: %w", err)
		}
		if err := o.Git.RemoveWorktree(ctx, repoDir, filepath.Join(dir, "worktree")); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove run directory: %w", err)
	}
	return nil
}

// mirror is one mirrors/<owner>/<name>.git.
type mirror struct {
	dir  string
	repo string // owner/name
}

// listMirrors lists the bare repositories two levels under dir.
func listMirrors(dir string) ([]mirror, error) {
	owners, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("gc: read %s: %w", dir, err)
	}
	var out []mirror
	for _, owner := range owners {
		if !owner.IsDir() {
			continue
		}
		repos, _ := os.ReadDir(filepath.Join(dir, owner.Name()))
		for _, r := range repos {
			name, ok := strings.CutSuffix(r.Name(), ".git")
			p := filepath.Join(dir, owner.Name(), r.Name())
			if ok && r.IsDir() && isFile(filepath.Join(p, "HEAD")) {
				out = append(out, mirror{dir: p, repo: owner.Name() + "/" + name})
			}
		}
	}
	return out, nil
}

func isFile(p string) bool {
	st, err := os.Lstat(p)
	return err == nil && st.Mode().IsRegular()
}
