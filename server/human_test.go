package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/queue"
)

// commentSink is a GitHub that only takes comments, each sent on posted;
// with fail set, commenting fails.
type commentSink struct {
	GitHub // nil: any other call panics
	posted chan string
	fail   error
}

func (c *commentSink) CreateComment(_ context.Context, _ Repo, _ int, body string) error {
	if c.fail != nil {
		return c.fail
	}
	c.posted <- body
	return nil
}

// approveQuestion is the question of `approve [shape=hexagon]` with edges
// labelled yes and no.
var approveQuestion = attractor.Question{RunID: "run-1", Node: "approve", Text: "Deploy to staging?", Choices: []attractor.Choice{
	{Key: "Y", Label: "yes", To: "deploy"}, {Key: "N", Label: "no", To: "skip"}}}

// newTestInterviewer is a prInterviewer on a real SQLite queue that polls
// every few milliseconds.
func newTestInterviewer(t *testing.T) (*prInterviewer, *queue.Queue, *commentSink) {
	t.Helper()
	q, err := queue.Open(context.Background(), queue.Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Close() })
	sink := &commentSink{posted: make(chan string, 4)}
	return &prInterviewer{answers: q, github: func(context.Context) (GitHub, error) { return sink, nil },
		repo: Repo{Owner: "octo", Name: "widgets", FullName: "octo/widgets"}, pr: 7, pipeline: "ci",
		headSHA: strings.Repeat("a", 40), runID: "run-1", poll: 5 * time.Millisecond, log: slog.New(slog.DiscardHandler)}, q, sink
}

type askResult struct {
	a   attractor.Answer
	err error
}

func ask(ctx context.Context, i *prInterviewer) <-chan askResult {
	done := make(chan askResult, 1)
	go func() {
		a, err := i.Ask(ctx, approveQuestion)
		done <- askResult{a, err}
	}()
	return done
}

func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(serverWait):
		t.Fatalf("timed out after %s waiting for %s", serverWait, what)
		panic("unreachable")
	}
}

// TestInterviewerAnswered: the question is posted once with the exact
// commands; a recorded answer reaches Ask, which then no longer waits.
func TestInterviewerAnswered(t *testing.T) {
	i, q, sink := newTestInterviewer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	done := ask(ctx, i)
	body := receive(t, sink.posted, "the question comment")
	for _, want := range []string{"`ci`", "run-1", "aaaaaaaaaaaa", "`approve`", "> Deploy to staging?",
		"`/kilroy answer approve yes` (goes to `deploy`)", "`/kilroy answer approve no` (goes to `skip`)",
		"write access", "human.default_choice"} {
		if !strings.Contains(body, want) {
			t.Errorf("question comment lacks %q:\n%s", want, body)
		}
	}
	if ok, err := q.RecordAnswer(ctx, "run-1", "approve", "Yes", "alice"); err != nil || !ok {
		t.Fatalf("RecordAnswer = %v, %v; want the run to be waiting", ok, err)
	}
	got := receive(t, done, "Ask to return")
	if got.err != nil || got.a != (attractor.Answer{Choice: "Yes"}) {
		t.Errorf("Ask = %+v, %v; want the recorded choice", got.a, got.err)
	}
	if ok, _ := q.RecordAnswer(ctx, "run-1", "approve", "no", "alice"); ok {
		t.Error("the run still waits after its answer")
	}
	if len(sink.posted) != 0 {
		t.Errorf("more than one comment posted: %q", <-sink.posted)
	}
}

// TestInterviewerAnsweredBefore: an answer recorded while the run was
// interrupted at the node is taken at once, without asking again.
func TestInterviewerAnsweredBefore(t *testing.T) {
	i, q, sink := newTestInterviewer(t)
	ctx := context.Background()
	if _, err := q.Wait(ctx, "run-1", "approve", "{}"); err != nil {
		t.Fatal(err)
	}
	if ok, err := q.RecordAnswer(ctx, "run-1", "approve", "no", "alice"); err != nil || !ok {
		t.Fatal(ok, err)
	}
	a, err := i.Ask(ctx, approveQuestion)
	if err != nil || a.Choice != "no" {
		t.Errorf("Ask = %+v, %v; want the answer given before", a, err)
	}
	if len(sink.posted) != 0 {
		t.Errorf("asked again: %q", <-sink.posted)
	}
}

// TestInterviewerStops: a cancelled run stops waiting with an error, the
// node's deadline is a timeout, and a question that cannot be posted
// fails; each time the run no longer waits, except when a shutdown hands
// the run back (it resumes waiting at the node).
func TestInterviewerStops(t *testing.T) {
	tests := []struct {
		name       string
		ctx        func() (context.Context, context.CancelFunc)
		fail       error
		want       attractor.Answer
		wantErr    error
		stillWaits bool
	}{
		{"cancelled", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancelCause(context.Background())
			time.AfterFunc(50*time.Millisecond, func() { cancel(errors.New("superseded by bbb")) })
			return ctx, func() { cancel(nil) }
		}, nil, attractor.Answer{}, context.Canceled, false},
		{"shutdown", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancelCause(context.Background())
			time.AfterFunc(50*time.Millisecond, func() { cancel(fmt.Errorf("%w: stop", queue.ErrStopping)) })
			return ctx, func() { cancel(nil) }
		}, nil, attractor.Answer{}, context.Canceled, true},
		{"node timeout", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 50*time.Millisecond)
		}, nil, attractor.Answer{TimedOut: true}, nil, false},
		{"run timeout", func() (context.Context, context.CancelFunc) {
			return context.WithTimeoutCause(context.Background(), 50*time.Millisecond, errors.New("limits.run_timeout of 50ms reached"))
		}, nil, attractor.Answer{}, context.DeadlineExceeded, false},
		{"comment fails", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), time.Hour)
		}, errors.New("502 bad gateway"), attractor.Answer{}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i, q, sink := newTestInterviewer(t)
			sink.fail = tt.fail
			ctx, cancel := tt.ctx()
			defer cancel()
			a, err := i.Ask(ctx, approveQuestion)
			if diff := cmp.Diff(a, tt.want); diff != "" {
				t.Errorf("Ask answer (-got +want):\n%s", diff)
			}
			switch {
			case tt.fail != nil:
				if err == nil || !strings.Contains(err.Error(), "ask approve on pull request #7") {
					t.Errorf("Ask err = %v, want it to say the question could not be posted", err)
				}
			case tt.wantErr == nil && err != nil, tt.wantErr != nil && !errors.Is(err, tt.wantErr):
				t.Errorf("Ask err = %v, want %v", err, tt.wantErr)
			}
			if ok, _ := q.RecordAnswer(context.Background(), "run-1", "approve", "yes", "alice"); ok != tt.stillWaits {
				t.Errorf("the run waits after Ask: %v, want %v", ok, tt.stillWaits)
			}
		})
	}
}

func TestAnswerCommand(t *testing.T) {
	choices := []attractor.Choice{
		{Key: "A", Label: "[A] Approve", To: "ship"},
		{Key: "S", Label: "ship it`", To: "s"},
		{Key: "N", Label: "no", To: "hold"},
	}
	var got []string
	for _, c := range choices {
		got = append(got, answerCommand("gate", c, choices))
	}
	// A label with a backtick cannot be quoted in a code span: the target
	// names that choice instead.
	want := []string{"/kilroy answer gate [A] Approve", "/kilroy answer gate s", "/kilroy answer gate no"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("answerCommand (-got +want):\n%s", diff)
	}
}

// TestInterviewerResumedDoesNotAskTwice: a run resumed at a question its
// interrupted process already posted waits for the answer without a second
// comment; one whose process stopped before posting asks.
func TestInterviewerResumedDoesNotAskTwice(t *testing.T) {
	i, q, sink := newTestInterviewer(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	first := ask(ctx, i)
	receive(t, sink.posted, "the question")
	// A shutdown hands the run back: the wait is kept for the resumed run.
	cancel(queue.ErrStopping)
	receive(t, first, "the interrupted Ask")

	// Ask records that the question is on the pull request after posting
	// it (or deciding it is there already): once that is written, a
	// second comment would have been sent.
	marked := make(chan struct{}, 1)
	i.answers = markingBook{answerBook: q, marked: marked}
	done := ask(context.Background(), i)
	receive(t, marked, "the resumed run to record its question as asked")
	select {
	case c := <-sink.posted:
		t.Fatalf("the resumed run asked again:\n%s", c)
	default:
	}
	if ok, err := q.RecordAnswer(context.Background(), "run-1", "approve", "yes", "alice"); err != nil || !ok {
		t.Fatalf("RecordAnswer = %v, %v; want the resumed run waiting", ok, err)
	}
	if got := receive(t, done, "the resumed Ask"); got.err != nil || got.a.Choice != "yes" {
		t.Errorf("resumed Ask = %+v, %v", got.a, got.err)
	}

	// Recorded as waiting but never posted (the process died in between).
	if _, err := q.Wait(context.Background(), "run-1", "approve", `{"text":"Deploy to staging?"}`); err != nil {
		t.Fatal(err)
	}
	again := ask(context.Background(), i)
	receive(t, sink.posted, "the question the earlier process never posted")
	if ok, _ := q.RecordAnswer(context.Background(), "run-1", "approve", "no", "alice"); !ok {
		t.Fatal("the run does not wait")
	}
	receive(t, again, "the last Ask")
}

// markingBook tells when a run records its question as posted.
type markingBook struct {
	answerBook
	marked chan<- struct{}
}

func (b markingBook) Wait(ctx context.Context, runID, node, question string) (string, error) {
	before, err := b.answerBook.Wait(ctx, runID, node, question)
	if strings.Contains(question, `"asked":true`) {
		select {
		case b.marked <- struct{}{}:
		default:
		}
	}
	return before, err
}
