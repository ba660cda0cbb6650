package server

import (
	"context"
	"errors"

	"github.com/kilroy-bot/kilroy-bot/queue"
	"github.com/kilroy-bot/kilroy-bot/runner/wtpool"
)

// Warm worktrees. With ServerOptions.Pool set, a pull request run takes
// its worktree from the repository's parked ones when there is one
// (wtpool.Pool.Take: cleaned, then moved to the run's commit writing only
// the files that differ) and checks out a fresh one otherwise. When the
// run ends (finished, failed or cancelled), after its final push and its
// checks are completed, its worktree is parked for the next run.
//
// Resume: a run stopped by a shutdown is handed back to be resumed, and
// its worktree is removed as without a pool; the resumed run remakes its
// own worktree at its checkpoint commit (runner.PrepareResume), never from
// the pool, so it continues exactly where its checkpoint left it. The run
// directory keeps what resume needs (checkpoint.json, graph.dot); the
// worktree is parked only once no resume can follow.
//
// What the pool cannot reach: artifact-policy caches and managed roots
// live outside the worktree (the host's caches, <run-dir>/policy-managed-roots),
// so neither parking nor cleaning touches them.

// makeWorktree is the run's runner.MakeWorktree: from the pool, else fresh.
func (r *prRun) makeWorktree(ctx context.Context, repo, dir, branch, startSHA string) error {
	if pool := r.s.o.Pool; pool != nil {
		err := pool.Take(ctx, repo, dir, branch, startSHA)
		if err == nil {
			r.log.Info("run: worktree taken from the warm pool")
			return nil
		}
		if !errors.Is(err, wtpool.ErrEmpty) {
			r.log.Warn("run: warm worktree discarded; checking out a fresh one", "err", err)
		}
	}
	return r.git.AddWorktree(ctx, repo, dir, branch, startSHA)
}

// releaseWorktree parks the worktree of a run that ended, or removes it
// when the run was stopped to be resumed or for the disk reserve (whose
// files are what the disk is short of; cause is the run context's).
// Without a pool, Execute already removed it.
func (r *prRun) releaseWorktree(ctx context.Context, cause error) {
	pool, p := r.s.o.Pool, r.prep
	if pool == nil || p == nil {
		return
	}
	if _, disk := errors.AsType[*DiskReserveError](cause); disk || errors.Is(cause, queue.ErrStopping) {
		if err := r.git.RemoveWorktree(ctx, p.RepoDir, p.Dir.Worktree()); err != nil {
			r.log.Warn("run: remove the worktree of a run to resume", "err", err)
		}
		return
	}
	if err := pool.Put(ctx, p.RepoDir, p.Dir.Worktree(), p.BaseSHA); err != nil {
		r.log.Warn("run: worktree not kept warm", "err", err)
	}
}
