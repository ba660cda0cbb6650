package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/queue"
)

// answerPoll is how often a waiting pull request run looks for an answer.
const answerPoll = 2 * time.Second

// stopWaitingTimeout bounds recording that a run stopped waiting, which
// must happen also when the run's context was cancelled.
const stopWaitingTimeout = 10 * time.Second

// answerBook is the part of the queue a waiting run uses: the answer to a
// `/kilroy answer` comment reaches the run through the database, whichever
// replica decided the comment and whichever works the run.
type answerBook interface {
	Wait(ctx context.Context, runID, node, question string) (before string, err error)
	StopWaiting(ctx context.Context, runID, node string) error
	TakeAnswer(ctx context.Context, runID, node string) (choice, by string, ok bool, err error)
}

// prInterviewer asks a pull request run's wait.human questions on the pull
// request: it records that the run waits, comments the question with the
// commands that answer it, and polls for the answer a writer's
// `/kilroy answer` records. The node's timeout (ctx's deadline) bounds the
// wait; a cancelled run stops waiting.
type prInterviewer struct {
	answers answerBook
	github  func(ctx context.Context) (GitHub, error)
	repo    Repo
	pr      int
	// pipeline, headSHA and runID say which run asks, in the comment.
	pipeline, headSHA, runID string
	poll                     time.Duration
	log                      *slog.Logger
}

// interviewer is the run's prInterviewer.
func (r *prRun) interviewer() *prInterviewer {
	repo := Repo{FullName: r.job.Repo, CloneURL: r.job.CloneURL}
	repo.Owner, repo.Name = splitRepo(r.job.Repo)
	return &prInterviewer{answers: r.s.o.Queue, repo: repo, pr: r.job.PR,
		pipeline: r.job.Pipeline, headSHA: r.job.HeadSHA, runID: r.job.RunID, poll: answerPoll, log: r.log,
		github: func(ctx context.Context) (GitHub, error) { return r.s.o.GitHub(ctx, r.job.InstallationID) }}
}

// Ask waits for the answer to q. An answer already recorded (given while
// the run was interrupted at this node) is taken without asking again, and
// a question the interrupted run already posted is not posted twice.
func (i *prInterviewer) Ask(ctx context.Context, q attractor.Question) (attractor.Answer, error) {
	sq := questionOf(q)
	before, err := i.wait(ctx, q.Node, sq)
	if err != nil {
		return attractor.Answer{}, err
	}
	defer i.stopWaiting(ctx, q.Node)
	if a, ok := i.take(ctx, q.Node); ok {
		return a, nil
	}
	if askedBefore(before, sq) {
		i.log.Info("run: resumed at a question asked before; not asked again", "node", q.Node)
	} else if err := i.post(ctx, q); err != nil {
		return attractor.Answer{}, err
	}
	// Posted: say so even if the run is being stopped right now, so that
	// its resumption does not post the question a second time.
	sq.Asked = true
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopWaitingTimeout)
	_, err = i.wait(mctx, q.Node, sq)
	cancel()
	if err != nil {
		return attractor.Answer{}, err
	}
	i.log.Info("run: waiting for an answer", "node", q.Node)
	tick := time.NewTicker(i.poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return i.ended(ctx, q.Node)
		case <-tick.C:
		}
		if a, ok := i.take(ctx, q.Node); ok {
			return a, nil
		}
	}
}

// wait records that the run waits at node with sq and returns what was
// recorded before.
func (i *prInterviewer) wait(ctx context.Context, node string, sq storedQuestion) (string, error) {
	stored, err := json.Marshal(sq)
	if err != nil {
		return "", fmt.Errorf("encode the question of %s: %w", node, err)
	}
	return i.answers.Wait(ctx, i.runID, node, string(stored))
}

// askedBefore reports whether before, what an interrupted run recorded,
// is this question already posted on the pull request.
func askedBefore(before string, sq storedQuestion) bool {
	var prev storedQuestion
	if before == "" || json.Unmarshal([]byte(before), &prev) != nil || !prev.Asked {
		return false
	}
	prev.Asked = false
	return reflect.DeepEqual(prev, sq)
}

// ended says how a wait without an answer ended: the node's own deadline
// is a timeout (human.default_choice applies), anything else (a cancel,
// a supersede, the run's timeout) stops the run.
func (i *prInterviewer) ended(ctx context.Context, node string) (attractor.Answer, error) {
	cause := context.Cause(ctx)
	if errors.Is(cause, context.DeadlineExceeded) {
		i.log.Info("run: no answer before the node's timeout", "node", node)
		return attractor.Answer{TimedOut: true}, nil
	}
	if errors.Is(cause, ctx.Err()) {
		return attractor.Answer{}, fmt.Errorf("stopped waiting for an answer: %w", ctx.Err())
	}
	return attractor.Answer{}, fmt.Errorf("stopped waiting for an answer (%v): %w", cause, ctx.Err())
}

// take returns the recorded answer, if any. A failed look is logged and
// tried again at the next tick: the node's timeout still bounds the wait.
func (i *prInterviewer) take(ctx context.Context, node string) (attractor.Answer, bool) {
	choice, by, ok, err := i.answers.TakeAnswer(ctx, i.runID, node)
	if err != nil {
		if ctx.Err() == nil {
			i.log.Warn("run: look for an answer", "node", node, "err", err)
		}
		return attractor.Answer{}, false
	}
	if ok {
		i.log.Info("run: answered", "node", node, "choice", choice, "by", by)
	}
	return attractor.Answer{Choice: choice}, ok
}

// stopWaiting records that the run stopped waiting, unless a shutdown
// hands the run back: it resumes at this node, and an answer given until
// then is kept for it.
func (i *prInterviewer) stopWaiting(ctx context.Context, node string) {
	if errors.Is(context.Cause(ctx), queue.ErrStopping) {
		return
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopWaitingTimeout)
	defer cancel()
	if err := i.answers.StopWaiting(sctx, i.runID, node); err != nil {
		i.log.Warn("run: record that the run no longer waits", "node", node, "err", err)
	}
}

// post comments the question on the pull request; the adapter redacts it.
func (i *prInterviewer) post(ctx context.Context, q attractor.Question) error {
	gh, err := i.github(ctx)
	if err != nil {
		return fmt.Errorf("ask %s on pull request #%d: github client: %w", q.Node, i.pr, err)
	}
	if err := gh.CreateComment(ctx, i.repo, i.pr, i.questionComment(ctx, q)); err != nil {
		return fmt.Errorf("ask %s on pull request #%d: comment: %w", q.Node, i.pr, err)
	}
	return nil
}

func (i *prInterviewer) questionComment(ctx context.Context, q attractor.Question) string {
	var b strings.Builder
	fmt.Fprintf(&b, "kilroy `%s` (run `%s` on %s) waits at `%s`", i.pipeline, i.runID, short(i.headSHA), q.Node)
	if text := strings.TrimSpace(q.Text); text != "" && text != q.Node {
		fmt.Fprintf(&b, ":\n\n> %s", strings.ReplaceAll(text, "\n", "\n> "))
	}
	b.WriteString("\n\nAnswer with a comment whose first line is one of:\n\n")
	for _, c := range q.Choices {
		fmt.Fprintf(&b, "- `%s` (goes to `%s`)\n", answerCommand(q.Node, c, q.Choices), c.To)
	}
	b.WriteString("\nOnly collaborators with write access can answer.")
	if dl, ok := ctx.Deadline(); ok {
		fmt.Fprintf(&b, " Without an answer by %s the question times out: the node's `human.default_choice` is taken, if it has one.",
			dl.UTC().Format("2006-01-02 15:04 UTC"))
	}
	return b.String()
}

// answerCommand is the comment that answers node with choice c: by its
// label, else its target, else its key, whichever names c alone and fits
// on a command line.
func answerCommand(node string, c attractor.Choice, all []attractor.Choice) string {
	word := c.Label
	for _, w := range []string{c.Label, c.To, c.Key} {
		w = strings.TrimSpace(w)
		if w == "" || strings.ContainsAny(w, "\n\r`") {
			continue
		}
		if m, ok := attractor.MatchChoice(w, all); ok && m == c {
			word = w
			break
		}
	}
	return "/kilroy answer " + node + " " + word
}

// storedQuestion is what a waiting run records with its wait, for the
// event worker to check answers against and to list in replies.
type storedQuestion struct {
	Text    string         `json:"text,omitempty"`
	Choices []storedChoice `json:"choices"`
	// Asked is set once the question is posted on the pull request.
	Asked bool `json:"asked,omitempty"`
}

type storedChoice struct {
	Key   string `json:"key"`
	Label string `json:"label"`
	To    string `json:"to"`
}

func questionOf(q attractor.Question) storedQuestion {
	s := storedQuestion{Text: q.Text}
	for _, c := range q.Choices {
		s.Choices = append(s.Choices, storedChoice(c))
	}
	return s
}

func (s storedQuestion) choices() []attractor.Choice {
	out := make([]attractor.Choice, len(s.Choices))
	for i, c := range s.Choices {
		out[i] = attractor.Choice(c)
	}
	return out
}
