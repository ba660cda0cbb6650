package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/policy"
	"github.com/kilroy-bot/kilroy-bot/queue"
)

// answer records a writer's `/kilroy answer NODE CHOICE` for every run of
// the pull request waiting at NODE whose choices CHOICE names (by the
// engine's rule); the run takes it from the queue. Anything else gets a
// reply listing what waits and with which choices.
func (w *eventWork) answer(ctx context.Context) error {
	cmd := w.ev.Command
	dec, err := w.senderDecision(ctx, policy.RequestCommand, true, "")
	if err != nil {
		return err
	}
	if !dec.Run {
		return w.reply(ctx, fmt.Sprintf("@%s, only collaborators with write access to %s can answer kilroy's questions (%s).",
			w.ev.Sender.Login, w.ev.Repo.FullName, dec.Reason))
	}
	all, err := w.s.o.Queue.WaitingOf(ctx, w.ev.Repo.FullName, w.ev.PR.Number)
	if err != nil {
		return err
	}
	var at []waitingRun
	for _, q := range all {
		if q.Node == cmd.Node {
			at = append(at, decodeWaiting(q))
		}
	}
	if len(at) == 0 {
		return w.reply(ctx, nothingWaits(cmd.Node, all))
	}
	var answered int
	var refused []string
	for _, r := range at {
		if _, ok := attractor.MatchChoice(cmd.Choice, r.q.choices()); !ok {
			refused = append(refused, unknownChoice(cmd, r))
			continue
		}
		ok, err := w.s.o.Queue.RecordAnswer(ctx, r.RunID, r.Node, cmd.Choice, w.ev.Sender.Login)
		if err != nil {
			return err
		}
		if !ok {
			refused = append(refused, fmt.Sprintf("`%s` no longer waits at `%s`: it timed out or ended meanwhile.", r.Pipeline, r.Node))
			continue
		}
		answered++
		w.log.Info("event: answer recorded", "run", r.RunID, "node", r.Node, "choice", cmd.Choice)
	}
	if answered > 0 {
		if err := w.gh.AddReaction(ctx, w.ev.Repo, w.ev.CommentID, "eyes"); err != nil {
			w.log.Warn("event: acknowledge answer", "err", err)
		}
	}
	if len(refused) == 0 {
		return nil
	}
	return w.reply(ctx, strings.Join(refused, "\n\n"))
}

// waitingRun is a queue.Waiting with its question decoded.
type waitingRun struct {
	queue.Waiting
	q storedQuestion
}

// decodeWaiting decodes what the run stored; a question it cannot read
// offers no choices, so answers to it are refused with a reply.
func decodeWaiting(w queue.Waiting) waitingRun {
	r := waitingRun{Waiting: w}
	_ = json.Unmarshal([]byte(w.Question), &r.q)
	return r
}

// nothingWaits is the reply to an answer for a node no run waits at: what
// does wait, and the node the comment probably meant.
func nothingWaits(node string, all []queue.Waiting) string {
	if len(all) == 0 {
		return "Nothing to answer: no kilroy run of this pull request is waiting for an answer."
	}
	var b strings.Builder
	if node == "" {
		b.WriteString("`/kilroy answer` needs a node and a choice: `/kilroy answer NODE CHOICE`.")
	} else {
		fmt.Fprintf(&b, "No kilroy run of this pull request waits at `%s`.", node)
		var nodes []string
		for _, w := range all {
			nodes = append(nodes, w.Node)
		}
		if s := attractor.Suggest(node, nodes); s != "" {
			fmt.Fprintf(&b, " Did you mean `%s`?", s)
		}
	}
	b.WriteString(" Waiting now:\n")
	for _, w := range all {
		r := decodeWaiting(w)
		fmt.Fprintf(&b, "\n- `%s` at `%s`: %s", r.Pipeline, r.Node, choiceCommands(r))
	}
	return b.String()
}

// unknownChoice is the reply to an answer that names none of a waiting
// run's choices.
func unknownChoice(cmd Command, r waitingRun) string {
	var b strings.Builder
	if cmd.Choice == "" {
		fmt.Fprintf(&b, "`/kilroy answer %s` needs a choice.", cmd.Node)
	} else {
		fmt.Fprintf(&b, "`%s` is not a choice of `%s` in `%s`.", cmd.Choice, r.Node, r.Pipeline)
		if s := attractor.Suggest(cmd.Choice, choiceWords(r)); s != "" {
			fmt.Fprintf(&b, " Did you mean `/kilroy answer %s %s`?", r.Node, s)
		}
	}
	fmt.Fprintf(&b, " Answer with one of: %s", choiceCommands(r))
	return b.String()
}

// choiceCommands lists the commands that answer a waiting run.
func choiceCommands(r waitingRun) string {
	choices := r.q.choices()
	if len(choices) == 0 {
		return "(its choices are unknown)"
	}
	cmds := make([]string, len(choices))
	for i, c := range choices {
		cmds[i] = answerCommand(r.Node, c, choices)
	}
	return codeList(cmds)
}

// choiceWords are the words a choice can be named by, for "did you mean".
func choiceWords(r waitingRun) []string {
	var out []string
	for _, c := range r.q.choices() {
		out = append(out, c.Label, c.To)
	}
	return out
}
