package server

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/policy"
	"github.com/kilroy-bot/kilroy-bot/queue"
)

// CommandUsage lists the comment commands, for help and unknown commands.
const CommandUsage = "`/kilroy run [PIPELINE...] [SHA]` runs the named pipelines (all when none are named) on the pull request's head " +
	"(only if it is the commit SHA, when one is given); " +
	"`/kilroy run --from-failure [PIPELINE...]` runs the failed ones again from the checkpoint before the node that failed; " +
	"`/kilroy cancel [PIPELINE...]` cancels its runs; `/kilroy answer NODE CHOICE` answers a run waiting at the human gate NODE; " +
	"`/kilroy help` shows this list."

// comment answers a `/kilroy` comment on a pull request.
func (w *eventWork) comment(ctx context.Context) error {
	cmd := w.ev.Command
	w.log = w.log.With("pr", w.ev.PR.Number, "verb", cmd.Verb, "sender", w.ev.Sender.Login)
	switch cmd.Verb {
	case VerbHelp:
		return w.reply(ctx, "kilroy commands: "+CommandUsage)
	case VerbUnknown:
		msg := fmt.Sprintf("`/kilroy %s` is not a kilroy command.", cmd.Unknown)
		if cmd.Suggestion != "" {
			msg += fmt.Sprintf(" Did you mean `/kilroy %s`?", cmd.Suggestion)
		}
		return w.reply(ctx, msg+"\n\nCommands: "+CommandUsage)
	case VerbInvalid:
		return w.reply(ctx, fmt.Sprintf("Nothing ran: %s %s not valid pipeline names.\n\nCommands: %s",
			codeList(cmd.Invalid), plural(len(cmd.Invalid), "is", "are"), CommandUsage))
	case VerbAnswer:
		return w.answer(ctx)
	case VerbRun, VerbCancel:
	default:
		w.log.Warn("event: unknown command verb; dropped")
		return nil
	}
	ok, err := w.senderMayRun(ctx, policy.RequestCommand, true, "")
	if err != nil || !ok {
		return err
	}
	if err := w.gh.AddReaction(ctx, w.ev.Repo, w.ev.CommentID, "eyes"); err != nil {
		w.log.Warn("event: acknowledge command", "err", err)
	}
	if cmd.Verb == VerbCancel {
		return w.cancel(ctx, w.ev.PR.Number, cmd.Pipelines, "@"+w.ev.Sender.Login)
	}
	if cmd.FromFailure {
		return w.commandFromFailure(ctx, cmd.Pipelines, cmd.SHA)
	}
	return w.commandRun(ctx, cmd.Pipelines)
}

// senderMayRun applies the trust rule to whoever commented or pressed a
// button, and tells them when they may not.
func (w *eventWork) senderMayRun(ctx context.Context, req policy.Request, headInBase bool, authorPerm string) (bool, error) {
	dec, err := w.senderDecision(ctx, req, headInBase, authorPerm)
	if err != nil || dec.Run {
		return dec.Run, err
	}
	return false, w.reply(ctx, fmt.Sprintf("@%s, only collaborators with write access to %s can run or cancel kilroy pipelines (%s). "+
		"Ask a maintainer to comment `/kilroy run`.", w.ev.Sender.Login, w.ev.Repo.FullName, dec.Reason))
}

// senderDecision is the trust rule's verdict on the sender, from the
// collaborator-permission API.
func (w *eventWork) senderDecision(ctx context.Context, req policy.Request, headInBase bool, authorPerm string) (policy.TrustDecision, error) {
	sender := w.ev.Sender.Login
	perm, err := w.gh.CollaboratorPermission(ctx, w.ev.Repo, sender)
	if err != nil {
		return policy.TrustDecision{}, err
	}
	dec := policy.Decide(policy.TrustInput{Request: req, HeadInBaseRepo: headInBase, AuthorPermission: authorPerm,
		Sender: sender, SenderPermission: perm})
	if !dec.Run {
		w.log.Info("event: request refused", "reason", dec.Reason)
	}
	return dec, nil
}

// commandRun runs a writer's `/kilroy run`: the pull request's head, with
// the head's pipelines and configuration when the pull request is trusted
// (as on a push) and the base branch's otherwise. An untrusted head runs
// only when it was the head when the comment was written, or is the commit
// the comment names (approval.go).
func (w *eventWork) commandRun(ctx context.Context, want []string) error {
	pr, err := w.gh.PullRequest(ctx, w.ev.Repo, w.ev.PR.Number)
	if err != nil {
		return err
	}
	if pr.State == "closed" {
		return w.reply(ctx, fmt.Sprintf("Pull request #%d is closed; nothing ran.", pr.Number))
	}
	authorPerm, err := w.gh.CollaboratorPermission(ctx, w.ev.Repo, pr.AuthorLogin)
	if err != nil {
		return err
	}
	// The sender's write access was checked by comment.
	fromBase := policy.Decide(policy.TrustInput{Request: policy.RequestCommand, HeadInBaseRepo: !pr.fork(w.ev.Repo),
		AuthorPermission: authorPerm, Sender: w.ev.Sender.Login, SenderPermission: "write"}).ConfigFromBase
	if ok, err := w.approvedHead(ctx, pr, fromBase); err != nil || !ok {
		return err
	}
	git, err := w.gitops(ctx)
	if err != nil {
		return err
	}
	f, err := w.s.fetchPR(ctx, git, w.ev.Repo, pr.Number, pr.HeadSHA, pr.BaseRef)
	if err != nil {
		return err
	}
	rev, source := pr.HeadSHA, "the pull request's head"
	if fromBase {
		rev, source = f.baseSHA, "the base branch"
	}
	cfg, ok, err := w.config(ctx, f.mirror, rev, pr.HeadSHA)
	if err != nil || !ok {
		return err
	}
	names, msg := commandPipelines(cfg, want, source)
	if msg != "" {
		return w.reply(ctx, msg)
	}
	sels, err := w.loadPipelines(ctx, f.mirror, rev, pr.HeadSHA, cfg, names)
	if err != nil || len(sels) == 0 {
		return err
	}
	var notes []string
	if fromBase {
		if notes, err = w.kilroyChangeNotes(ctx, pr); err != nil {
			return err
		}
	}
	return w.enqueue(ctx, runRequest{pr: pr.Number, headSHA: pr.HeadSHA, baseRef: pr.BaseRef,
		trigger: queue.TriggerComment, requestedBy: w.ev.Sender.Login, configFromBase: fromBase}, sels, notes)
}

// commandPipelines resolves the names of `/kilroy run`: all pipelines that
// allow commands when none are named. A non-empty msg is the reply that
// explains why nothing runs; source names where cfg was read.
func commandPipelines(cfg *policy.RepoConfig, want []string, source string) (names []string, msg string) {
	all := slices.Sorted(maps.Keys(cfg.Pipelines))
	if len(want) == 0 {
		for _, n := range all {
			if cfg.Pipelines[n].Command {
				names = append(names, n)
			}
		}
		if len(names) == 0 {
			return nil, "Nothing ran: no pipeline of " + source + " may be started by a comment (`command: false`)."
		}
		return names, ""
	}
	var problems []string
	for _, n := range want {
		pl, ok := cfg.Pipelines[n]
		switch {
		case !ok:
			p := fmt.Sprintf("there is no pipeline `%s`", n)
			if s := attractor.Suggest(n, all); s != "" {
				p += fmt.Sprintf(" (did you mean `%s`?)", s)
			}
			problems = append(problems, p)
		case !pl.Command:
			problems = append(problems, fmt.Sprintf("`%s` may not be started by a comment (`command: false`)", n))
		default:
			names = append(names, n)
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Sprintf("Nothing ran: %s.\n\nPipelines of %s: %s.",
			strings.Join(problems, "; "), source, codeList(all))
	}
	return names, ""
}

// kilroyChangeNotes says when the pull request changes `.kilroy/`: the run
// used the base branch's version of those files, not the PR's.
func (w *eventWork) kilroyChangeNotes(ctx context.Context, pr PullRequest) ([]string, error) {
	files, err := w.gh.PullRequestFiles(ctx, w.ev.Repo, pr.Number)
	if err != nil {
		return nil, err
	}
	var changed []string
	for _, f := range files {
		if strings.HasPrefix(f, ".kilroy/") {
			changed = append(changed, f)
		}
	}
	if len(changed) == 0 {
		return nil, nil
	}
	return []string{fmt.Sprintf("This pull request changes %s; this run used the pipelines and configuration of the base branch `%s`, not the pull request's.",
		codeList(changed), pr.BaseRef)}, nil
}

// button handles a check's Re-run or Cancel button and check suite
// re-runs: the check's own head SHA, for its pipeline (all for a suite).
func (w *eventWork) button(ctx context.Context) error {
	sha := w.ev.CheckRun.HeadSHA
	if sha == "" {
		sha = w.ev.CheckSuite.HeadSHA
	}
	if g, ok := groupOfBranch(w.ev.CheckSuite.QueueBranch, sha); ok {
		return w.groupButton(ctx, g, pipelineOfCheck(w.ev.CheckRun.Name))
	}
	number, err := w.prOf(ctx, sha)
	if errors.Is(err, errNoPR) {
		w.log.Info("event: re-run of a commit with no known pull request; ignored", "head", sha)
		return nil
	}
	if err != nil {
		return err
	}
	w.log = w.log.With("pr", number, "sender", w.ev.Sender.Login)
	w.ev.PR.Number = number
	pr, err := w.gh.PullRequest(ctx, w.ev.Repo, number)
	if err != nil {
		return err
	}
	authorPerm, err := w.gh.CollaboratorPermission(ctx, w.ev.Repo, pr.AuthorLogin)
	if err != nil {
		return err
	}
	headInBase := !pr.fork(w.ev.Repo)
	if ok, err := w.senderMayRun(ctx, policy.RequestRerun, headInBase, authorPerm); err != nil || !ok {
		return err
	}
	pipeline := pipelineOfCheck(w.ev.CheckRun.Name)
	if w.ev.Kind == KindCancel {
		var only []string
		if pipeline != "" {
			only = []string{pipeline}
		}
		return w.cancel(ctx, number, only, "@"+w.ev.Sender.Login)
	}
	if w.ev.CheckRun.RequestedAction == ActionRerunFailed && pipeline != "" {
		return w.resumeFailed(ctx, pr, sha, pipeline, runOfCheck(w.ev.CheckRun.ExternalID), queue.TriggerRerun)
	}
	dec := policy.Decide(policy.TrustInput{Request: policy.RequestRerun, HeadInBaseRepo: headInBase,
		AuthorPermission: authorPerm, Sender: w.ev.Sender.Login, SenderPermission: "write"})
	return w.rerun(ctx, pr, sha, pipeline, dec.ConfigFromBase)
}

func (w *eventWork) rerun(ctx context.Context, pr PullRequest, sha, pipeline string, fromBase bool) error {
	git, err := w.gitops(ctx)
	if err != nil {
		return err
	}
	f, err := w.s.fetchPR(ctx, git, w.ev.Repo, pr.Number, sha, pr.BaseRef)
	if err != nil {
		return err
	}
	rev := sha
	if fromBase {
		rev = f.baseSHA
	}
	cfg, ok, err := w.config(ctx, f.mirror, rev, sha)
	if err != nil || !ok {
		return err
	}
	names := slices.Sorted(maps.Keys(cfg.Pipelines))
	if pipeline != "" {
		if _, ok := cfg.Pipelines[pipeline]; !ok {
			w.log.Info("event: re-run of a pipeline the configuration no longer has", "pipeline", pipeline)
			return nil
		}
		names = []string{pipeline}
	}
	sels, err := w.loadPipelines(ctx, f.mirror, rev, sha, cfg, names)
	if err != nil || len(sels) == 0 {
		return err
	}
	return w.enqueue(ctx, runRequest{pr: pr.Number, headSHA: sha, baseRef: pr.BaseRef, trigger: queue.TriggerRerun,
		requestedBy: w.ev.Sender.Login, configFromBase: fromBase}, sels, nil)
}

// prOf finds the pull request of a re-run: from the payload, or for fork
// pull requests (whose payloads list none) from the queue's SHA→PR map.
func (w *eventWork) prOf(ctx context.Context, sha string) (int, error) {
	if len(w.ev.PullNumbers) > 0 {
		return w.ev.PullNumbers[0], nil
	}
	pr, ok, err := w.s.o.Queue.LookupPRBySHA(ctx, w.ev.Repo.FullName, sha)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, errNoPR
	}
	return pr, nil
}

// pipelineOfCheck is the pipeline of a check named kilroy/<pipeline> or
// kilroy/<pipeline>/<node>; "" (all) for kilroy/config and other names.
func pipelineOfCheck(name string) string {
	rest, ok := strings.CutPrefix(name, "kilroy/")
	if !ok || name == ConfigCheckName {
		return ""
	}
	p, _, _ := strings.Cut(rest, "/")
	return p
}

// closed cancels every unfinished run of a pull request that was closed
// or merged, as `/kilroy cancel` would: nobody waits for those checks and
// the runs hold workers. Closing is GitHub's decision, so there is no
// trust check, and nothing is posted on the pull request. A repository or
// pull request with nothing running is a quiet no-op.
func (w *eventWork) closed(ctx context.Context) error {
	pr := w.ev.PR
	reason := "pull request closed"
	if pr.Merged {
		reason = "pull request merged"
	}
	w.log = w.log.With("pr", pr.Number, "sender", w.ev.Sender.Login)
	// by reaches running runs as "cancelled by <by>", so it names the
	// reason and, when known, who closed the pull request.
	by := reason
	if login := w.ev.Sender.Login; login != "" {
		by = "@" + login + " (" + reason + ")"
	}
	return w.cancel(ctx, pr.Number, nil, by)
}

// cancel cancels the pull request's unfinished runs of the pipelines (all
// when none are named) on behalf of by ("@octocat"); the checks say
// "cancelled by <by>".
func (w *eventWork) cancel(ctx context.Context, pr int, pipelines []string, by string) error {
	if len(pipelines) == 0 {
		pipelines = []string{""}
	}
	var stopped []queue.Run
	for _, p := range pipelines {
		runs, err := w.s.o.Queue.CancelBy(ctx, w.ev.Repo.FullName, pr, p, by)
		if err != nil {
			return err
		}
		stopped = append(stopped, runs...)
	}
	if len(stopped) == 0 {
		w.log.Info("event: nothing to cancel", "by", by)
		if w.ev.Kind == KindCommentCommand {
			return w.reply(ctx, "Nothing to cancel: no kilroy run of this pull request is queued or running.")
		}
		return nil
	}
	w.log.Info("event: cancelled runs", "count", len(stopped), "by", by)
	w.s.completeStopped(ctx, w.ev.InstallationID, stopped, "cancelled by "+by)
	return nil
}

// reply comments on the event's pull request.
func (w *eventWork) reply(ctx context.Context, body string) error {
	return w.gh.CreateComment(ctx, w.ev.Repo, w.ev.PR.Number, body)
}

func codeList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = "`" + x + "`"
	}
	return strings.Join(q, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// short abbreviates a commit SHA for messages, as runner does.
func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
