package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/queue"
	"github.com/kilroy-bot/kilroy-bot/runner"
	"github.com/kilroy-bot/kilroy-bot/runner/caches"
	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
)

// finishTimeout bounds the work after a run ends (final push, completing
// checks, revoking tokens), which must happen even when the run's own
// context was cancelled.
const finishTimeout = 2 * time.Minute

// prRun is one pull request run job being worked.
type prRun struct {
	s   *Server
	job queue.RunJob
	log *slog.Logger
	dir runner.RunDir
	// env is the server's node environment with the caches of the run's
	// repository.
	env runner.EnvInputs
	git *gitops.Git // authenticates fetches and pushes of this run
	rep Reporter
	// history is what the run did before this execution resumed it; nil
	// when it starts over.
	history *runner.History
	// prep is the run being executed, whose worktree end releases.
	prep *runner.Prepared
}

// HandleRun works one run job: a fresh token, the mirror fetched, a
// worktree of the head SHA, the pipeline (from the head, or the base
// branch when ConfigFromBase) executed with the checks reporting and the
// run branch pushed after each checkpoint and at the end, then the token
// revoked. Its wait.human nodes are asked on the pull request (human.go).
// A run handed back after an interruption (Resumes > 0) resumes from its
// checkpoint.json when it has one and starts over otherwise.
//
// Every check of the run ends completed: with the result (Close), with
// the cancellation ("superseded by <sha>", "cancelled by @user") or with
// the internal error (Fail). Only a shutdown leaves them for the resumed
// run to finish.
func (s *Server) HandleRun(ctx context.Context, job queue.RunJob) error {
	r := &prRun{s: s, job: job, dir: s.runDir(job.RunID), env: s.runEnv(job),
		log: s.log.With("installation", job.InstallationID, "repo", job.Repo, "pr", job.PR, "run", job.RunID,
			"pipeline", job.Pipeline)}
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	defer s.disk.watch(job.RunID, string(r.dir), stop)()
	src, revoke, err := s.o.Tokens(ctx, job.InstallationID, job.Repo)
	if err != nil {
		return r.end(ctx, nil, nil, fmt.Errorf("git token: %w", err))
	}
	defer r.revoke(ctx, revoke)
	p, err := r.prepare(ctx, src)
	if err != nil {
		return r.end(ctx, nil, nil, err)
	}
	if err := r.adopt(ctx, p.Pipeline, p.Image()); err != nil {
		r.log.Error("run: adopt checks", "err", err)
	}
	r.log.Info("run: started", "head", job.HeadSHA, "resumes", job.Resumes, "branch", p.Branch)
	push := newPusher(r.log, r.git, p.RepoDir, job.CloneURL, p.Branch, job.HeadSHA)
	r.prep = p
	charge, allow := s.o.Daily.hooks(ctx, r.log, job.InstallationID)
	res, err := p.Execute(ctx, runner.LocalOptions{GitPath: s.o.GitPath, Env: r.env, Agent: s.o.Agent, NewAgent: s.o.NewAgent,
		Listener: attractor.Listeners{r.rep, push}, Interviewer: r.interviewer(), Store: r.store(),
		KeepWorktree: s.o.Pool != nil, Images: s.o.Images, ChargeUsage: charge, AllowUsage: allow, DailyBudgetKey: s.o.Daily.key()})
	return r.end(ctx, push, res, err)
}

// prepare makes the run ready: resumed from its checkpoint, or new.
func (r *prRun) prepare(ctx context.Context, src gitops.TokenSource) (*runner.Prepared, error) {
	if r.job.Resumes > 0 {
		if p, ok := r.resume(ctx, src); ok {
			return p, nil
		}
	}
	if r.job.FromRun != "" {
		if p, ok := r.fork(ctx, src); ok {
			return p, nil
		}
	}
	if err := r.clearRunDir(); err != nil {
		return nil, err
	}
	git, err := r.s.gitFor(r.dir.GitHome(), src)
	if err != nil {
		return nil, err
	}
	r.git = git
	repo := Repo{FullName: r.job.Repo, CloneURL: r.job.CloneURL}
	repo.Owner, repo.Name = splitRepo(r.job.Repo)
	f, err := r.s.fetchPR(ctx, git, repo, r.job.PR, r.job.HeadSHA, r.job.BaseRef)
	if err != nil {
		return nil, err
	}
	rev := r.job.HeadSHA
	if r.job.ConfigFromBase {
		rev = f.baseSHA
	}
	sel, err := runner.SelectPipeline(ctx, git, f.mirror, rev, r.job.Pipeline, attractor.WithGraphCaps(r.s.o.Caps.Graph))
	if err != nil {
		return nil, err
	}
	r.job.Notes = append(r.job.Notes, r.s.o.Caps.clamp(sel)...)
	r.job.Notes = append(r.job.Notes, r.s.o.Daily.note(ctx, r.log, r.job.InstallationID, sel.Pipeline)...)
	if err := r.measureHead(ctx, git, f.mirror); err != nil {
		return nil, err
	}
	// The image's tag is resolved while the worktree is made: a
	// registry's round trips are off the run's critical path.
	pin := r.s.o.Images.StartPin(ctx, sel)
	defer r.s.mirrorLocks.lock(f.mirror)()
	p, err := runner.AssembleFrom(ctx, git, r.job.RunID, r.dir, f.mirror, r.job.HeadSHA, sel, r.env, r.makeWorktree)
	if err != nil {
		pin.Stop()
		return nil, err
	}
	if err := p.PinImage(pin); err != nil {
		p.Abandon(ctx)
		return nil, err
	}
	return p, nil
}

// measureHead refuses a head whose tree is over the server's checkout
// limits, before anything of it is written: a few objects can name a
// million files.
func (r *prRun) measureHead(ctx context.Context, git *gitops.Git, mirror string) error {
	lim := r.s.o.Caps.Checkout
	if lim == (gitops.TreeLimits{}) {
		return nil
	}
	size, err := git.MeasureTree(ctx, mirror, r.job.HeadSHA, lim)
	if tl, ok := errors.AsType[*gitops.TreeTooLargeError](err); ok {
		r.log.Warn("run: head tree over the checkout limits", "files", tl.Size.Files, "bytes", tl.Size.Bytes)
		return checkoutTooLarge(tl)
	}
	if err != nil {
		return err
	}
	r.log.Debug("run: head tree measured", "files", size.Files, "bytes", size.Bytes)
	return nil
}

// resume prepares an interrupted run from its checkpoint; ok is false when
// there is none to resume from (the run starts over).
func (r *prRun) resume(ctx context.Context, src gitops.TokenSource) (*runner.Prepared, bool) {
	r.rebuild(ctx, src) // another replica ran it: its directory from the database
	cp, err := runner.ReadCheckpoint(string(r.dir))
	if err != nil || cp.State.Finished {
		r.log.Info("run: interrupted before a resumable checkpoint; starting over", "err", err)
		return nil, false
	}
	git, err := r.s.gitFor(r.dir.GitHome(), src)
	if err != nil {
		r.log.Warn("run: resume", "err", err)
		return nil, false
	}
	unlock := r.s.mirrorLocks.lock(cp.RepoDir)
	p, err := runner.PrepareResume(ctx, string(r.dir), runner.LocalOptions{GitPath: r.s.o.GitPath, Env: r.env})
	unlock()
	if err != nil {
		r.log.Warn("run: cannot resume; starting over", "err", err)
		return nil, false
	}
	r.git = git
	// Read now: the resumed run appends to progress.ndjson. Without the
	// history the checks still complete, the earlier nodes just show less.
	if r.history, err = runner.ReadHistory(string(r.dir)); err != nil {
		r.log.Warn("run: read what the run did before it was interrupted", "err", err)
	}
	r.log.Info("run: resuming", "checkpoint", cp.CommitSHA)
	return p, true
}

// clearRunDir removes what an earlier attempt of this run left, so a run
// that starts over starts clean; the stale worktree registration goes with
// the prune AddWorktree does.
func (r *prRun) clearRunDir() error {
	if err := os.RemoveAll(string(r.dir)); err != nil {
		return fmt.Errorf("clear run directory of %s: %w", r.job.RunID, err)
	}
	return nil
}

// adopt makes the run's reporter and takes over its queued checks.
func (r *prRun) adopt(ctx context.Context, graph *attractor.Pipeline, im *runner.RunImage) error {
	rep, err := r.s.o.NewReporter(ctx, ReportTarget{InstallationID: r.job.InstallationID, Repo: r.job.Repo,
		HeadSHA: r.job.HeadSHA, PR: r.job.PR, Pipeline: r.job.Pipeline, RunID: r.job.RunID, Graph: graph, Notes: r.job.Notes,
		History: r.history, Image: im})
	if err != nil {
		return err
	}
	r.rep = rep
	return rep.Adopt(ctx)
}

// end pushes the run branch a last time and completes the checks the way
// the run ended. Its error is what the queue records: a cancellation stays
// a cancellation, a pipeline failure is a result (nil).
func (r *prRun) end(ctx context.Context, push *pusher, res *attractor.RunResult, runErr error) error {
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	defer r.releaseWorktree(fctx, context.Cause(ctx))
	var pushErr error
	if push != nil {
		if pushErr = push.finish(fctx); pushErr != nil {
			r.log.Error("run: final push of the run branch", "err", pushErr)
		}
	}
	cause := context.Cause(ctx)
	if errors.Is(cause, queue.ErrStopping) {
		// The queue hands the run back; its resumption completes the checks.
		r.log.Info("run: stopped by shutdown; will resume")
		return cause
	}
	if r.rep == nil {
		if err := r.adopt(fctx, nil, nil); err != nil {
			r.log.Error("run: adopt checks", "err", err)
		}
	}
	if pushErr != nil && r.rep != nil {
		// The checks link checkpoint commits GitHub never got: the summary
		// must not report success.
		reason := fmt.Sprintf("%s: %s", push.branch, r.s.publicReason(pushErr))
		if err := r.rep.PushFailed(fctx, reason); err != nil {
			r.log.Error("run: report the failed push", "err", err)
		}
	}
	var ce *queue.CancelledError
	var de *DiskReserveError
	switch {
	case errors.As(cause, &de):
		r.log.Warn("run: stopped for the disk reserve", "setting", de.Setting)
		r.complete(fctx, "fail", func(ctx context.Context) error { return r.rep.Fail(ctx, de.Error()) })
		return nil
	case errors.As(cause, &ce):
		r.log.Info("run: cancelled", "reason", ce.Error())
		r.complete(fctx, "cancel", func(ctx context.Context) error { return r.rep.Cancel(ctx, ce.Error()) })
		r.finish(runner.RunEnd{Status: runner.EndCanceled, Reason: ce.Error()})
		return cause
	case runErr != nil:
		r.log.Error("run: failed to run", "err", runErr)
		r.complete(fctx, "fail", func(ctx context.Context) error { return r.rep.Fail(ctx, r.s.publicReason(runErr)) })
		r.finish(runner.RunEnd{Status: runner.EndFail, Reason: r.s.publicReason(runErr)})
		return runErr
	default:
		r.log.Info("run: finished", "status", res.Status, "failed_node", res.FailedNode)
		r.complete(fctx, "close", r.rep.Close)
		r.finish(runner.EndOf(res, nil))
		return nil
	}
}

// finish ends the run's progress.ndjson, after the final push and the
// checks (and with them report.md) are done; a run that never got a run
// directory has none.
func (r *prRun) finish(end runner.RunEnd) {
	if r.prep == nil {
		return
	}
	if err := r.prep.Finish(end); err != nil {
		r.log.Warn("run: end progress.ndjson", "err", err)
	}
}

func (r *prRun) complete(ctx context.Context, what string, f func(context.Context) error) {
	if r.rep == nil {
		return
	}
	if err := f(ctx); err != nil {
		r.log.Error("run: complete checks", "how", what, "err", err)
	}
}

// revoke revokes the run's tokens on a context that outlives the run's.
func (r *prRun) revoke(ctx context.Context, revoke func(context.Context) error) {
	if revoke == nil {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), revokeTimeout)
	defer cancel()
	if err := revoke(rctx); err != nil {
		r.log.Warn("run: revoke git tokens", "err", err)
	}
}

// runEnv is the node environment of job's run: the server's, with the
// caches of its repository (or installation, by CacheScope), which no
// other installation's run ever gets.
func (s *Server) runEnv(job queue.RunJob) runner.EnvInputs {
	env := s.o.Env
	owner, name := splitRepo(job.Repo)
	env.Caches = caches.Dir(filepath.Join(s.o.DataDir, runner.CachesDir), s.o.CacheScope, job.InstallationID, owner, name)
	return env
}

func splitRepo(full string) (owner, name string) {
	owner, name, _ = strings.Cut(full, "/")
	return owner, name
}
