package server

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/kilroy-bot/kilroy-bot/policy"
	"github.com/kilroy-bot/kilroy-bot/queue"
)

// mergeGroup answers the merge queue. checks_requested runs every
// pipeline whose on.merge_group is true on the group's head commit and
// reports the same check names there, so that a branch protection rule
// requiring kilroy/<pipeline> lets the queue merge. destroyed cancels the
// group's runs.
//
// Trust. The group's commit holds the code of the queued pull requests,
// like a pull request's head, but GitHub queues only pull requests that
// someone with write access queued after the required checks passed, and
// only GitHub makes the group's branch; so the run needs no approval. What
// runs and how (pipelines, config) comes from the base branch, as for an
// approved fork pull request: a queued pull request cannot change what
// the queue checks it with.
func (w *eventWork) mergeGroup(ctx context.Context) error {
	g := w.ev.MergeGroup
	w.log = w.log.With("pr", g.PR, "merge_group", g.HeadRef)
	if w.ev.Action == ActionDestroyed {
		return w.groupDestroyed(ctx, g)
	}
	if g.PR == 0 {
		w.log.Error("event: merge group branch names no pull request; nothing runs", "head", g.HeadSHA)
		return nil
	}
	return w.runGroup(ctx, g, "", "")
}

// runGroup enqueues the runs of a merge group: every pipeline whose
// on.merge_group is true, or only the one named, requested by requestedBy
// ("" for the queue itself).
func (w *eventWork) runGroup(ctx context.Context, g MergeGroup, only, requestedBy string) error {
	git, err := w.gitops(ctx)
	if err != nil {
		return err
	}
	f, err := w.s.fetchPR(ctx, git, w.ev.Repo, g.PR, g.HeadSHA, g.BaseRef)
	if err != nil {
		return err
	}
	cfg, ok, err := w.config(ctx, f.mirror, f.baseSHA, g.HeadSHA)
	if err != nil || !ok {
		return err
	}
	names := selectForGroup(cfg)
	if only != "" {
		names = slices.DeleteFunc(names, func(n string) bool { return n != only })
	}
	if len(names) == 0 {
		w.log.Info("event: no pipeline runs for the merge queue", "head", g.HeadSHA)
		return nil
	}
	sels, err := w.loadPipelines(ctx, f.mirror, f.baseSHA, g.HeadSHA, cfg, names)
	if err != nil || len(sels) == 0 {
		return err
	}
	w.log.Info("event: merge group", "head", g.HeadSHA, "pipelines", names)
	return w.enqueue(ctx, runRequest{pr: g.PR, headSHA: g.HeadSHA, baseRef: g.BaseRef,
		trigger: queue.TriggerMergeGroup, requestedBy: requestedBy, configFromBase: true}, sels, []string{groupNote(g)})
}

// groupButton answers a re-run or cancel button pressed on a merge
// group's check: a writer may re-run the group's pipelines (as the queue
// runs them: base branch's pipelines, the group's commit) or cancel its
// runs, and only those.
func (w *eventWork) groupButton(ctx context.Context, g MergeGroup, pipeline string) error {
	w.ev.PR.Number = g.PR // where a refusal is answered
	w.log = w.log.With("pr", g.PR, "merge_group", g.HeadRef, "sender", w.ev.Sender.Login)
	// The group's code is the queued pull requests', which GitHub queued
	// for writers: the presser is the one to check.
	if ok, err := w.senderMayRun(ctx, policy.RequestRerun, true, "write"); err != nil || !ok {
		return err
	}
	if w.ev.Kind == KindCancel {
		by := "@" + w.ev.Sender.Login
		runs, err := w.s.o.Queue.CancelHead(ctx, w.ev.Repo.FullName, g.HeadSHA, by)
		if err != nil {
			return err
		}
		w.s.completeStopped(ctx, w.ev.InstallationID, runs, "cancelled by "+by)
		return nil
	}
	return w.runGroup(ctx, g, pipeline, w.ev.Sender.Login)
}

// selectForGroup picks the pipelines whose on.merge_group is true. paths
// does not narrow them: a check the queue requires must report on every
// group, or the queue waits for it forever.
func selectForGroup(cfg *policy.RepoConfig) []string {
	var names []string
	for _, name := range slices.Sorted(maps.Keys(cfg.Pipelines)) {
		if cfg.Pipelines[name].On.MergeGroup {
			names = append(names, name)
		}
	}
	return names
}

// groupNote is the line a group's summary check carries: which pull
// requests the group holds and where it will merge.
func groupNote(g MergeGroup) string {
	return fmt.Sprintf("Merge queue: this run tests merge group `%s`, the base branch `%s` with the queued "+
		"pull requests up to and including #%d, using the pipelines and configuration of `%s`.",
		g.HeadRef, g.BaseRef, g.PR, g.BaseRef)
}

// groupDestroyed cancels the runs of a group GitHub dropped (merged,
// dequeued, or invalidated by a group ahead of it) and completes the
// checks of those that had not started; running ones complete their own.
func (w *eventWork) groupDestroyed(ctx context.Context, g MergeGroup) error {
	by := "the merge queue (merge group " + orWord(g.Reason, "destroyed") + ")"
	runs, err := w.s.o.Queue.CancelHead(ctx, w.ev.Repo.FullName, g.HeadSHA, by)
	if err != nil {
		return err
	}
	w.log.Info("event: merge group destroyed", "head", g.HeadSHA, "reason", g.Reason, "cancelled", len(runs))
	w.s.completeStopped(ctx, w.ev.InstallationID, runs, "cancelled by "+by)
	return nil
}

func orWord(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
