package server

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/kilroy-bot/kilroy-bot/runner/gc"
	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
)

// Retention. What runs leave in the data dir expires by the server
// policy's retention (runner/gc Sweep, with the queue as the judge of what
// is still active and the mirror locks of this Server held while a mirror
// is deleted or collected); an uninstall deletes its tenant's part at once
// (tenant.go). Replicas sharing a Postgres queue sweep one at a time (the
// queue's sweep lock): one that finds another sweeping skips that pass
// and sweeps at its next.

// RetentionOptions configure the sweep.
type RetentionOptions struct {
	Retention gc.Retention
	// Every is the time between sweeps after the first, at start.
	Every time.Duration
	// InstallationOf finds the installation that reaches repo (owner/name),
	// for deleting run branches on its remote; nil deletes none there.
	InstallationOf func(ctx context.Context, repo string) (int64, error)
	// Now is the sweep's clock (default time.Now).
	Now func() time.Time
}

// RunRetention sweeps the data dir now and then every o.Every, until ctx
// ends. Each sweep's outcome is logged.
func (s *Server) RunRetention(ctx context.Context, o RetentionOptions) {
	for {
		s.sweepOnce(ctx, o)
		select {
		case <-ctx.Done():
			return
		case <-time.After(o.Every):
		}
	}
}

func (s *Server) sweepOnce(ctx context.Context, o RetentionOptions) {
	res, err := s.Sweep(ctx, o)
	if err != nil {
		s.log.Error("retention: sweep", "err", err)
	}
	if res.Skipped {
		s.log.Info("retention: another replica is sweeping; skipped this pass")
		return
	}
	for _, f := range res.Failed {
		s.log.Warn("retention: not removed; tried again next sweep", "err", f)
	}
	if n := len(res.Runs) + len(res.Branches) + len(res.RemoteBranches) + len(res.Mirrors) + len(res.Caches); n > 0 {
		s.log.Info("retention: swept", "runs", res.Runs, "branches", res.Branches,
			"remote_branches", res.RemoteBranches, "mirrors", res.Mirrors, "collected", res.Collected, "caches", res.Caches)
	}
}

// Sweep removes what expired from the data dir once.
func (s *Server) Sweep(ctx context.Context, o RetentionOptions) (gc.Swept, error) {
	git, err := s.gitFor(filepath.Join(s.o.DataDir, "home"), nil)
	if err != nil {
		return gc.Swept{}, err
	}
	opts := gc.SweepOptions{DataDir: s.o.DataDir, Retention: o.Retention, Queue: s.o.Queue, Git: git,
		LockMirror: s.mirrorLocks.lock, Unpark: s.unpark, Now: o.Now}
	if o.InstallationOf != nil {
		opts.Remote = s.remoteGit(o.InstallationOf)
	}
	return gc.Sweep(ctx, opts)
}

// unpark removes the worktrees of mirror parked in the pool: each keeps
// its last run's commit and files, which the sweep or an uninstall is
// about to delete from the mirror.
func (s *Server) unpark(ctx context.Context, mirror string) {
	if s.o.Pool == nil {
		return
	}
	if err := s.o.Pool.Drain(ctx, mirror); err != nil {
		s.log.Warn("retention: remove parked worktrees", "mirror", mirror, "err", err)
	}
}

// lockDrained is the lock of a mirror an uninstall deletes: the mirror's
// lock, and then none of its worktrees left in the pool.
func (s *Server) lockDrained(ctx context.Context) func(mirror string) (unlock func()) {
	return func(mirror string) func() {
		unlock := s.mirrorLocks.lock(mirror)
		s.unpark(ctx, mirror)
		return unlock
	}
}

// remoteGit is a git with fresh tokens of the installation reaching a
// mirror's repository.
func (s *Server) remoteGit(installationOf func(context.Context, string) (int64, error)) gc.RemoteGit {
	return func(ctx context.Context, info gc.MirrorInfo) (*gitops.Git, func(), error) {
		id, err := installationOf(ctx, info.Repo)
		if err != nil {
			return nil, nil, fmt.Errorf("installation of %s: %w", info.Repo, err)
		}
		src, revoke, err := s.o.Tokens(ctx, id, info.Repo)
		if err != nil {
			return nil, nil, fmt.Errorf("git token for %s: %w", info.Repo, err)
		}
		done := func() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), revokeTimeout)
			defer cancel()
			if err := revoke(rctx); err != nil {
				s.log.Warn("retention: revoke git token", "repo", info.Repo, "err", err)
			}
		}
		git, err := s.gitFor(filepath.Join(s.o.DataDir, "home"), src)
		if err != nil {
			done()
			return nil, nil, err
		}
		return git, done, nil
	}
}

// markMirror records the mirror's use and remote for the sweep; a failure
// only makes the mirror look older.
func (s *Server) markMirror(mirror string, repo Repo) {
	if err := gc.MarkMirror(mirror, gc.MirrorInfo{Repo: repo.FullName, CloneURL: repo.CloneURL}); err != nil {
		s.log.Warn("mirror: record its use", "repo", repo.FullName, "err", err)
	}
}
