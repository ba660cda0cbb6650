package server

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
	"github.com/kilroy-bot/kilroy-bot/queue"
)

// Re-run from the failure. The "Re-run from failure" button of a failed
// summary check (requested action ActionRerunFailed) and `/kilroy run
// --from-failure` start a new run of the failed run's pipeline on the
// same head SHA that resumes from the checkpoint before the node that
// failed (runner.ForkFailed): with the failed run's pinned graph,
// artifact policy, limits and image, not the repository's current ones.
// The same people may ask for it as for a plain re-run. The plain Re-run
// (check_run.rerequested, check_suite.rerequested, the "rerun" button)
// still starts over.

// ActionRerunFailed is the identifier of the "Re-run from failure" button.
const ActionRerunFailed = "rerun_failed"

// CheckRunState is a check run on a commit as GitHub lists it.
type CheckRunState struct {
	Name, ExternalID, Status, Conclusion string
}

// CheckLister lists the check runs on a commit, newest first. The
// GitHub of a server that answers `/kilroy run --from-failure` has it.
type CheckLister interface {
	CheckRuns(ctx context.Context, repo Repo, sha string) ([]CheckRunState, error)
}

// runOfCheck is the run a check's external_id names: "<run-id>" or
// "<run-id>/<node>".
func runOfCheck(externalID string) string {
	id, _, _ := strings.Cut(externalID, "/")
	return id
}

// resumeFailed enqueues the run that resumes run from, a finished run of
// pipeline on sha of pull request pr, from its failure.
func (w *eventWork) resumeFailed(ctx context.Context, pr PullRequest, sha, pipeline, from string, trigger queue.Trigger) error {
	log := w.log.With("from_run", from, "pipeline", pipeline)
	old, err := w.s.o.Queue.RunByID(ctx, from)
	if err != nil || old.Repo != w.ev.Repo.FullName || old.HeadSHA != sha || old.Pipeline != pipeline || old.Unfinished() {
		log.Info("event: re-run from failure of a run this repository's head does not have finished", "err", err)
		return w.reply(ctx, fmt.Sprintf("Nothing ran: run `%s` is not a finished run of `%s` on %s, so kilroy cannot resume it from its failure. "+
			"Use Re-run or `/kilroy run %s` to start over.", from, pipeline, short(sha), pipeline))
	}
	job := queue.RunArgs{
		InstallationID: w.ev.InstallationID, Repo: w.ev.Repo.FullName, CloneURL: w.ev.Repo.CloneURL,
		PR: pr.Number, HeadSHA: sha, BaseRef: pr.BaseRef, Pipeline: pipeline, Trigger: trigger,
		RequestedBy: w.ev.Sender.Login, RunID: queue.NewRunID(), FromRun: from,
	}
	res, err := w.s.o.Queue.EnqueueRuns(ctx, nil, []queue.RunArgs{job})
	if err != nil {
		return err
	}
	e := res.Jobs[0]
	if e.Duplicate {
		log.Info("event: re-run from failure coalesced into an unfinished run", "run", e.RunID)
		return w.s.checkCoalesced(ctx, e.RunID)
	}
	log.Info("event: re-run from failure enqueued", "run", e.RunID, "head", sha)
	rep, err := w.s.o.NewReporter(ctx, ReportTarget{InstallationID: w.ev.InstallationID, Repo: w.ev.Repo.FullName,
		HeadSHA: sha, PR: pr.Number, Pipeline: pipeline, RunID: e.RunID, Graph: w.s.graphOf(from)})
	if err == nil {
		err = rep.Queued(ctx)
	}
	if err != nil {
		log.Error("event: create queued checks", "run", e.RunID, "err", err)
	}
	stopped := make([]queue.Run, len(res.Superseded))
	for i, s := range res.Superseded {
		stopped[i] = s.Run
	}
	w.s.completeStopped(ctx, w.ev.InstallationID, stopped, "superseded by a re-run from failure on "+sha)
	return nil
}

// graphOf is the pipeline run id executed, when this replica has its
// run directory; nil otherwise (its checks are then made when it starts).
func (s *Server) graphOf(id string) *attractor.Pipeline {
	src, err := safefile.ReadIn(string(s.runDir(id)), "graph.dot", attractor.MaxSourceBytes)
	if err != nil {
		return nil
	}
	p, _, err := attractor.Load(filepath.Join(string(s.runDir(id)), "graph.dot"), src)
	if err != nil {
		return nil
	}
	return p
}

// commandFromFailure answers `/kilroy run --from-failure [PIPELINE...]`:
// every named pipeline (all when none are named) whose latest summary
// check on the pull request's head failed is resumed from its failure.
func (w *eventWork) commandFromFailure(ctx context.Context, want []string, sha string) error {
	lister, ok := w.gh.(CheckLister)
	if !ok {
		return errors.New("re-run from failure: this server's GitHub cannot list check runs")
	}
	pr, err := w.gh.PullRequest(ctx, w.ev.Repo, w.ev.PR.Number)
	if err != nil {
		return err
	}
	if pr.State == "closed" {
		return w.reply(ctx, fmt.Sprintf("Pull request #%d is closed; nothing ran.", pr.Number))
	}
	if sha != "" && !strings.HasPrefix(pr.HeadSHA, sha) {
		return w.reply(ctx, fmt.Sprintf("Nothing ran: the head of #%d is %s, not %s.", pr.Number, short(pr.HeadSHA), sha))
	}
	runs, err := lister.CheckRuns(ctx, w.ev.Repo, pr.HeadSHA)
	if err != nil {
		return err
	}
	failed := latestFailed(runs)
	var names, missing []string
	for _, p := range want {
		if _, ok := failed[p]; !ok {
			missing = append(missing, p)
		}
	}
	if len(want) == 0 {
		for p := range failed {
			names = append(names, p)
		}
		slices.Sort(names)
	} else {
		for _, p := range want {
			if _, ok := failed[p]; ok {
				names = append(names, p)
			}
		}
	}
	var errs []error
	if len(missing) > 0 || len(names) == 0 {
		what := "no pipeline"
		if len(missing) > 0 {
			what = codeList(missing)
		}
		errs = append(errs, w.reply(ctx, fmt.Sprintf("Nothing to resume for %s: the latest run on %s did not fail at a node. "+
			"`/kilroy run` starts over.", what, short(pr.HeadSHA))))
	}
	for _, p := range names {
		errs = append(errs, w.resumeFailed(ctx, pr, pr.HeadSHA, p, failed[p], queue.TriggerComment))
	}
	return errors.Join(errs...)
}

// latestFailed maps each pipeline whose newest summary check on a commit
// failed to that check's run.
func latestFailed(runs []CheckRunState) map[string]string {
	out, seen := map[string]string{}, map[string]bool{}
	for _, r := range runs { // newest first
		p := pipelineOfCheck(r.Name)
		if p == "" || r.Name != "kilroy/"+p || seen[p] {
			continue
		}
		seen[p] = true
		if r.Status == "completed" && r.Conclusion == "failure" && r.ExternalID != "" {
			out[p] = runOfCheck(r.ExternalID)
		}
	}
	return out
}
