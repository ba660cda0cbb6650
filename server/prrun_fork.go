package server

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/kilroy-bot/kilroy-bot/runner"
	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
)

// fork prepares a run that resumes run job.FromRun from its failure
// (rerun_failed.go): this run's directory becomes a copy of the failed
// run's at the checkpoint before its failed node (runner.ForkFailed) and
// resumes from there as an interrupted run would (runner.PrepareResume).
// ok is false when that cannot be done (the failed run's directory is on
// another replica or was swept, it failed before any checkpoint): the run
// starts over, and its summary says why.
func (r *prRun) fork(ctx context.Context, src gitops.TokenSource) (*runner.Prepared, bool) {
	from := string(r.s.runDir(r.job.FromRun))
	log := r.log.With("from_run", r.job.FromRun)
	fail := func(err error) (*runner.Prepared, bool) {
		log.Warn("run: cannot resume from the failure; starting over", "err", err)
		r.job.Notes = append(r.job.Notes, fmt.Sprintf("Asked to re-run from the failure of run `%s`, which cannot be done (%s): this run starts over.",
			r.job.FromRun, r.s.publicReason(err)))
		return nil, false
	}
	if _, err := os.Stat(from); err != nil {
		return fail(errors.New("its run directory is not on this server: swept by retention, or run by another replica"))
	}
	oldBranch, err := runner.FailedRunBranch(from)
	if err != nil {
		return fail(err)
	}
	if err := r.clearRunDir(); err != nil {
		return fail(err)
	}
	git, err := r.s.gitFor(r.dir.GitHome(), src)
	if err != nil {
		return fail(err)
	}
	repo := Repo{FullName: r.job.Repo, CloneURL: r.job.CloneURL}
	repo.Owner, repo.Name = splitRepo(r.job.Repo)
	f, err := r.s.fetchPR(ctx, git, repo, r.job.PR, r.job.HeadSHA, r.job.BaseRef)
	if err != nil {
		return fail(err)
	}
	unlock := r.s.mirrorLocks.lock(f.mirror)
	// The failed run's checkpoint commits: pushed with its run branch.
	if err := git.Fetch(ctx, f.mirror, r.job.CloneURL, "+refs/heads/"+oldBranch+":refs/heads/"+oldBranch); err != nil {
		log.Info("run: fetch the failed run's branch; resuming from the commits this replica has", "err", err)
	}
	fk, err := runner.ForkFailed(from, r.dir, r.job.RunID, f.mirror)
	if errors.Is(err, runner.ErrNoFailure) {
		err = errors.New("it has no checkpoint before a failed node")
	}
	var p *runner.Prepared
	if err == nil {
		p, err = runner.PrepareResume(ctx, string(r.dir), runner.LocalOptions{GitPath: r.s.o.GitPath, Env: r.env})
	}
	unlock()
	if err != nil {
		_ = r.clearRunDir()
		return fail(err)
	}
	r.git, r.history = git, fk.History
	if st := r.store(); st != nil {
		// Another replica that resumes this run rebuilds it from the
		// database: the journal it starts with goes there too.
		for _, rec := range fk.Records {
			st.Checkpointed(ctx, r.job.RunID, rec)
		}
	}
	r.job.Notes = append(r.job.Notes, fmt.Sprintf("Re-run from the failure of run `%s`: resumed at its checkpoint `%s`, before `%s` failed, "+
		"with that run's pipeline, artifact policy, limits and image; the nodes before it did not run again.", fk.From, short(fk.Resumed), fk.Failed))
	log.Info("run: resuming from the failure", "checkpoint", fk.Resumed, "failed", fk.Failed)
	return p, true
}
