package attractor

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// Interviewer asks a human to choose at a wait.human node. Hosts adapt it
// to a terminal, a PR comment or a web page. ctx carries the node's
// timeout as its deadline: an interviewer that waits for an answer should
// report that deadline as Answer{TimedOut: true} (or return ctx's error).
type Interviewer interface {
	Ask(ctx context.Context, q Question) (Answer, error)
}

// Question is a multiple-choice question; the choices are the node's
// outgoing edges.
type Question struct {
	RunID   string
	Node    string
	Text    string
	Choices []Choice
}

// Choice is one outgoing edge offered to the human.
type Choice struct {
	Key   string // accelerator key: "Y" for "[Y] Yes", else the first letter
	Label string // edge label, else the target node ID
	To    string // target node ID
}

// Answer is the human's reply. Choice may name a choice by key, label or
// target; Skipped and TimedOut report that no choice was made.
type Answer struct {
	Choice   string
	Text     string
	Skipped  bool
	TimedOut bool
}

// AutoFirst answers every question with its first choice; for unattended
// runs.
type AutoFirst struct{}

// Ask returns the first choice.
func (AutoFirst) Ask(_ context.Context, q Question) (Answer, error) {
	if len(q.Choices) == 0 {
		return Answer{Skipped: true}, nil
	}
	return Answer{Choice: q.Choices[0].Label}, nil
}

// Queue answers from a fixed list, in order, and records the questions;
// once empty it skips. For tests and replay.
type Queue struct {
	mu      sync.Mutex
	answers []Answer
	asked   []Question
}

// NewQueue returns a Queue that will give answers in order.
func NewQueue(answers ...Answer) *Queue {
	return &Queue{answers: answers}
}

// Ask pops the next answer.
func (q *Queue) Ask(_ context.Context, qu Question) (Answer, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.asked = append(q.asked, qu)
	if len(q.answers) == 0 {
		return Answer{Skipped: true}, nil
	}
	a := q.answers[0]
	q.answers = q.answers[1:]
	return a, nil
}

// Asked returns the questions asked so far.
func (q *Queue) Asked() []Question {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]Question(nil), q.asked...)
}

// Console asks on a text stream: it prints the question and numbered
// choices to w and reads lines from r (a number, key, label or node ID)
// until one names a choice: a typo at the prompt asks again rather than
// failing the gate.
type Console struct {
	mu sync.Mutex
	r  *bufio.Reader
	w  io.Writer
}

// NewConsole returns a Console reading answers from r and writing to w.
func NewConsole(r io.Reader, w io.Writer) *Console {
	return &Console{r: bufio.NewReader(r), w: w}
}

// Ask prints q and reads answer lines until one names a choice. End of
// input skips.
func (c *Console) Ask(ctx context.Context, q Question) (Answer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return Answer{}, err
	}
	fmt.Fprintf(c.w, "[?] %s\n", q.Text)
	for i, ch := range q.Choices {
		fmt.Fprintf(c.w, "  %d) %s\n", i+1, choiceText(ch))
	}
	for {
		fmt.Fprint(c.w, "Select: ")
		line, err := c.r.ReadString('\n')
		line = strings.TrimSpace(line)
		if line == "" && err == io.EOF {
			return Answer{Skipped: true}, nil
		}
		if err != nil && err != io.EOF {
			return Answer{}, fmt.Errorf("read answer: %w", err)
		}
		if a, ok := consoleAnswer(line, q.Choices); ok {
			return a, nil
		}
		fmt.Fprintf(c.w, "%s\n", notAChoice(line, q.Choices))
		if err := ctx.Err(); err != nil {
			return Answer{}, err
		}
	}
}

// consoleAnswer reads a typed line as a choice's number or as anything
// MatchChoice accepts.
func consoleAnswer(line string, choices []Choice) (Answer, bool) {
	if n, err := strconv.Atoi(line); err == nil && n >= 1 && n <= len(choices) {
		return Answer{Choice: choices[n-1].Label}, true
	}
	if _, ok := matchChoice(Answer{Choice: line}, choices); ok {
		return Answer{Choice: line}, true
	}
	return Answer{}, false
}

// notAChoice says what to type instead of line, with the nearest label.
func notAChoice(line string, choices []Choice) string {
	msg := fmt.Sprintf("type its number (1-%d), key or label", len(choices))
	if line == "" {
		return msg
	}
	msg = fmt.Sprintf("%q is none of the choices: %s", line, msg)
	if s := SuggestChoice(line, choices); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return msg
}

// SuggestChoice returns the label, without its accelerator prefix, of the
// choice answer most likely meant; "" when none is close.
func SuggestChoice(answer string, choices []Choice) string {
	labels := make([]string, len(choices))
	for i, ch := range choices {
		labels[i] = normalizeEdgeLabel(ch.Label)
	}
	return suggest(normalizeEdgeLabel(answer), labels)
}

// MatchChoice finds the choice answer names, by the rule the engine
// applies to an Answer's Choice, so a host can check an answer before it
// hands it over.
func MatchChoice(answer string, choices []Choice) (Choice, bool) {
	return matchChoice(Answer{Choice: answer}, choices)
}

// matchChoice finds the choice an answer names: by key, then label (both
// compared normalised), then target ID.
func matchChoice(a Answer, choices []Choice) (Choice, bool) {
	want := strings.TrimSpace(a.Choice)
	if want == "" {
		return Choice{}, false
	}
	for _, c := range choices {
		if strings.EqualFold(c.Key, want) && len(want) == len(c.Key) {
			return c, true
		}
	}
	for _, c := range choices {
		if normalizeEdgeLabel(c.Label) == normalizeEdgeLabel(want) {
			return c, true
		}
	}
	for _, c := range choices {
		if c.To == want {
			return c, true
		}
	}
	return Choice{}, false
}

// choiceText shows a choice with its key once: a label written "[A] Approve"
// already carries it.
func choiceText(ch Choice) string {
	if strings.HasPrefix(ch.Label, "["+ch.Key+"]") {
		return ch.Label
	}
	return "[" + ch.Key + "] " + ch.Label
}
