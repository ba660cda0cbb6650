package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/kilroy-bot/kilroy-bot/queue"
	"github.com/kilroy-bot/kilroy-bot/runner"
)

// runRequest is what the runs of one decision share.
type runRequest struct {
	pr             int
	headSHA        string
	baseRef        string
	trigger        queue.Trigger
	requestedBy    string
	configFromBase bool
}

// enqueue enqueues one run per selected pipeline, creates the checks of
// each new run in state queued, and completes the checks of the queued
// runs they superseded. A run that coalesced into one already queued or
// running keeps that run's checks.
//
// Reporting failures are logged, not returned: the runs are committed,
// and a retry of the event would only find them coalesced. The run job
// adopts its checks (creating any that are missing) when it starts.
func (w *eventWork) enqueue(ctx context.Context, req runRequest, sels []*runner.Selection, notes []string) error {
	jobs := make([]queue.RunArgs, len(sels))
	for i, sel := range sels {
		jobs[i] = queue.RunArgs{
			InstallationID: w.ev.InstallationID, Repo: w.ev.Repo.FullName, CloneURL: w.ev.Repo.CloneURL,
			PR: req.pr, HeadSHA: req.headSHA, BaseRef: req.baseRef, Pipeline: sel.Name, Trigger: req.trigger,
			RequestedBy: req.requestedBy, ConfigFromBase: req.configFromBase, RunID: queue.NewRunID(), Notes: notes,
		}
	}
	res, err := w.s.o.Queue.EnqueueRuns(ctx, nil, jobs)
	if err != nil {
		return err
	}
	// A coalesced run that turns out to be finishing makes the event be
	// retried, but only after the new runs of this same commit got their
	// checks: the retry finds those coalesced and creates nothing.
	var retry []error
	for i, e := range res.Jobs {
		log := w.log.With("run", e.RunID, "pipeline", sels[i].Name)
		if e.Duplicate {
			if err := w.s.checkCoalesced(ctx, e.RunID); err != nil {
				retry = append(retry, err)
				continue
			}
			log.Info("event: run coalesced into an unfinished one", "head", req.headSHA)
			continue
		}
		log.Info("event: run enqueued", "head", req.headSHA, "trigger", req.trigger)
		rep, err := w.s.o.NewReporter(ctx, ReportTarget{InstallationID: w.ev.InstallationID, Repo: w.ev.Repo.FullName,
			HeadSHA: req.headSHA, PR: req.pr, Pipeline: sels[i].Name, RunID: e.RunID, Graph: sels[i].Pipeline, Notes: notes})
		if err == nil {
			err = rep.Queued(ctx)
		}
		if err != nil {
			log.Error("event: create queued checks", "err", err)
		}
	}
	stopped := make([]queue.Run, len(res.Superseded))
	for i, s := range res.Superseded {
		stopped[i] = s.Run
	}
	w.s.completeStopped(ctx, w.ev.InstallationID, stopped, "superseded by "+req.headSHA)
	return errors.Join(retry...)
}

// errRunFinishing is retried by the queue: a request coalesced into a run
// that has just ended, whose job River has not yet marked completed.
var errRunFinishing = errors.New("coalesced into a run that is finishing; retry")

// checkCoalesced makes sure a coalesced run is really unfinished: a re-run
// pressed as the last run ends must start a new run, not vanish into the
// old one.
func (s *Server) checkCoalesced(ctx context.Context, runID string) error {
	run, err := s.o.Queue.RunByID(ctx, runID)
	if err != nil {
		return err
	}
	if !run.Unfinished() {
		return fmt.Errorf("run %s is %s: %w", runID, run.State, errRunFinishing)
	}
	return nil
}

// completeStopped completes the checks of runs stopped before they
// started (superseded or cancelled while queued) with reason. Runs that
// were running complete their own checks when their handler sees the
// cancellation.
func (s *Server) completeStopped(ctx context.Context, installationID int64, runs []queue.Run, reason string) {
	for _, r := range runs {
		if r.State != "queued" {
			continue
		}
		log := s.log.With("installation", installationID, "repo", r.Repo, "pr", r.PR, "run", r.ID, "pipeline", r.Pipeline)
		rep, err := s.o.NewReporter(ctx, ReportTarget{InstallationID: installationID, Repo: r.Repo,
			HeadSHA: r.HeadSHA, PR: r.PR, Pipeline: r.Pipeline, RunID: r.ID})
		if err == nil {
			err = errors.Join(rep.Adopt(ctx), rep.Cancel(ctx, reason))
		}
		if err != nil {
			log.Error("complete the checks of a stopped run", "reason", reason, "err", err)
			continue
		}
		log.Info("stopped queued run", "reason", reason)
	}
}
