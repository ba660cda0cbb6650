package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/kilroy-bot/kilroy-bot/policy"
	"github.com/kilroy-bot/kilroy-bot/queue"
	"github.com/kilroy-bot/kilroy-bot/runner"
	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
)

// revokeTimeout bounds revoking a token after the work that used it.
const revokeTimeout = 30 * time.Second

// eventWork is one event being decided: its installation's API and, once
// a fetch needs it, a git with a repository-scoped token.
type eventWork struct {
	s      *Server
	ev     Event
	log    *slog.Logger
	gh     GitHub
	git    *gitops.Git
	revoke func(context.Context) error
}

// HandleEvent decides one accepted delivery: who may run what, from which
// configuration, and enqueues the runs (or cancels them: a cancel button,
// `/kilroy cancel`, a closed pull request). An error is retried by the
// queue; bad input (an event it cannot decode, a repository without
// pipelines, an invalid configuration) is logged or reported on the pull
// request and not retried.
func (s *Server) HandleEvent(ctx context.Context, job queue.EventJob) error {
	var ev Event
	if err := json.Unmarshal(job.Payload, &ev); err != nil {
		s.log.Error("event: undecodable payload; dropped", "delivery", job.DeliveryID, "err", err)
		return nil
	}
	log := s.log.With("delivery", job.DeliveryID, "installation", ev.InstallationID, "repo", ev.Repo.FullName)
	switch ev.Kind {
	case KindInstallation:
		if err := s.installationChanged(ctx, ev, log); err != nil {
			return fmt.Errorf("event %s (%s %s): %w", job.DeliveryID, ev.Kind, ev.Action, err)
		}
		return nil
	case KindPing:
		log.Info("event: recorded", "kind", ev.Kind, "action", ev.Action)
		return nil
	case KindPullRequest, KindCommentCommand, KindRerun, KindCancel, KindMergeGroup:
	default:
		log.Warn("event: unknown kind; dropped", "kind", ev.Kind)
		return nil
	}
	if err := checkEventRepo(ev); err != nil {
		log.Error("event: dropped", "err", err)
		return nil
	}
	gh, err := s.o.GitHub(ctx, ev.InstallationID)
	if err != nil {
		return fmt.Errorf("event %s: github client: %w", job.DeliveryID, err)
	}
	w := &eventWork{s: s, ev: ev, log: log, gh: gh}
	defer w.close(ctx)
	if err := w.decide(ctx); err != nil {
		return fmt.Errorf("event %s (%s): %w", job.DeliveryID, ev.Kind, err)
	}
	return nil
}

func checkEventRepo(ev Event) error {
	r := ev.Repo
	if r.Owner == "" || r.Name == "" || r.FullName == "" || r.CloneURL == "" || ev.InstallationID == 0 {
		return fmt.Errorf("%s event without a complete repository or installation", ev.Kind)
	}
	return nil
}

func (w *eventWork) decide(ctx context.Context) error {
	switch w.ev.Kind {
	case KindPullRequest:
		return w.pullRequest(ctx)
	case KindCommentCommand:
		return w.comment(ctx)
	case KindMergeGroup:
		return w.mergeGroup(ctx)
	case KindCancel:
		if w.ev.Action == ActionClosed {
			return w.closed(ctx)
		}
		return w.button(ctx)
	default:
		return w.button(ctx)
	}
}

// gitops returns the event's git, minting its token source on first use.
func (w *eventWork) gitops(ctx context.Context) (*gitops.Git, error) {
	if w.git != nil {
		return w.git, nil
	}
	src, revoke, err := w.s.o.Tokens(ctx, w.ev.InstallationID, w.ev.Repo.FullName)
	if err != nil {
		return nil, fmt.Errorf("git token for %s: %w", w.ev.Repo.FullName, err)
	}
	w.revoke = revoke
	git, err := w.s.gitFor(filepath.Join(w.s.o.DataDir, "home"), src)
	if err != nil {
		return nil, err
	}
	w.git = git
	return git, nil
}

// close revokes the event's tokens, even when ctx was cancelled.
func (w *eventWork) close(ctx context.Context) {
	if w.revoke == nil {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), revokeTimeout)
	defer cancel()
	if err := w.revoke(rctx); err != nil {
		w.log.Warn("event: revoke git token", "err", err)
	}
}

// pullRequest starts the pipelines a pull request event selects, or gates
// them when the pull request is not trusted.
func (w *eventWork) pullRequest(ctx context.Context) error {
	pr := w.ev.PR
	w.log = w.log.With("pr", pr.Number)
	perm, err := w.gh.CollaboratorPermission(ctx, w.ev.Repo, pr.AuthorLogin)
	if err != nil {
		return err
	}
	dec := policy.Decide(policy.TrustInput{Request: policy.RequestPullRequest,
		HeadInBaseRepo: !pr.fork(w.ev.Repo), AuthorPermission: perm})
	git, err := w.gitops(ctx)
	if err != nil {
		return err
	}
	f, err := w.s.fetchPR(ctx, git, w.ev.Repo, pr.Number, pr.HeadSHA, pr.BaseRef)
	if err != nil {
		return err
	}
	rev := pr.HeadSHA
	if dec.ActionRequired {
		rev = f.baseSHA // never read an untrusted head's configuration
	}
	cfg, ok, err := w.config(ctx, f.mirror, rev, pr.HeadSHA)
	if err != nil || !ok {
		return err
	}
	names, err := w.selectForPR(ctx, cfg, pr)
	if err != nil || len(names) == 0 {
		return err
	}
	sels, err := w.loadPipelines(ctx, f.mirror, rev, pr.HeadSHA, cfg, names)
	if err != nil || len(sels) == 0 {
		return err
	}
	if dec.ActionRequired {
		return w.gate(ctx, pr, sels, dec.Reason)
	}
	// Deciding took a fetch; a close decided meanwhile found nothing to
	// cancel, so a pull request closed by now gets no runs.
	if now, err := w.gh.PullRequest(ctx, w.ev.Repo, pr.Number); err != nil {
		return err
	} else if now.State == "closed" {
		w.log.Info("event: pull request closed while deciding; no runs", "head", pr.HeadSHA)
		return nil
	}
	w.log.Info("event: trusted pull request", "head", pr.HeadSHA, "pipelines", names)
	return w.enqueue(ctx, runRequest{pr: pr.Number, headSHA: pr.HeadSHA, baseRef: pr.BaseRef,
		trigger: queue.TriggerPullRequest}, sels, nil)
}

// gate completes a summary check per pipeline action_required: an
// untrusted pull request waits for a writer's `/kilroy run`.
func (w *eventWork) gate(ctx context.Context, pr PullRequest, sels []*runner.Selection, reason string) error {
	w.log.Info("event: pull request needs approval", "head", pr.HeadSHA, "reason", reason)
	var errs []error
	for _, sel := range sels {
		rep, err := w.s.o.NewReporter(ctx, ReportTarget{InstallationID: w.ev.InstallationID, Repo: w.ev.Repo.FullName,
			HeadSHA: pr.HeadSHA, PR: pr.Number, Pipeline: sel.Name, RunID: queue.NewRunID(), Graph: sel.Pipeline})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		summary := fmt.Sprintf("kilroy did not run `%s` on this pull request automatically: %s.\n\n"+
			"A collaborator with write access can comment `/kilroy run` (or `/kilroy run %s`) to run it on the "+
			"commit that is the pull request's head when they comment (`/kilroy run %s` names it), with the pipelines "+
			"and configuration of the base branch `%s`. If a push comes after the comment, nothing runs and kilroy asks again.",
			sel.Name, reason, sel.Name, pr.HeadSHA, pr.BaseRef)
		errs = append(errs, rep.ActionRequired(ctx, "Waiting for approval to run", summary))
	}
	// Remember the head, so a re-run button on these checks (whose fork
	// payloads list no pull request) finds it.
	_, err := w.s.o.Queue.EnqueueRuns(ctx, []queue.PRHead{{Repo: w.ev.Repo.FullName, PR: pr.Number, HeadSHA: pr.HeadSHA}}, nil)
	return errors.Join(append(errs, err)...)
}
