package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// Progress is a listener that appends one JSON object per line to
// progress.ndjson and, when Live is set, prints short human lines: where
// the run lives when it starts, a line when a node starts (a long node is
// not silence), one per failed attempt that is retried, and one when a
// node ends. It is what a person tails while a run goes on and what tools
// read after it.
type Progress struct {
	mu    sync.Mutex
	w     io.Writer // progress.ndjson
	live  io.Writer // may be nil
	now   func() time.Time
	usage attractor.UsageTotal // this execution's agent attempts
}

// NewProgress writes events to w and human lines to live (nil for none).
func NewProgress(w, live io.Writer) *Progress {
	return &Progress{w: w, live: live, now: time.Now}
}

// event is one progress.ndjson line. Fields are omitted when they do not
// apply to the event type.
type event struct {
	Time         string `json:"time"`
	Type         string `json:"type"`
	RunID        string `json:"run_id"`
	Pipeline     string `json:"pipeline,omitempty"`
	Node         string `json:"node,omitempty"`
	Attempt      int    `json:"attempt,omitempty"`
	Status       string `json:"status,omitempty"`
	FailureClass string `json:"failure_class,omitempty"`
	Reason       string `json:"reason,omitempty"`
	DurationMS   int64  `json:"duration_ms,omitempty"`
	From         string `json:"from,omitempty"`
	To           string `json:"to,omitempty"`
	Method       string `json:"method,omitempty"`
	SHA          string `json:"sha,omitempty"`
	BaseSHA      string `json:"base_sha,omitempty"`
	Branch       string `json:"branch,omitempty"`
	// Usage is an agent attempt's (attempt_finished, node_finished);
	// UsageTotal the run's agents' in this execution (run_finished).
	Usage      *attractor.Usage      `json:"usage,omitempty"`
	UsageTotal *attractor.UsageTotal `json:"usage_total,omitempty"`
}

func (p *Progress) emit(ev event) error {
	ev.Time = p.now().UTC().Format(time.RFC3339Nano)
	b, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("progress: encode %s: %w", ev.Type, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, err := p.w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("progress: write %s: %w", ev.Type, err)
	}
	return nil
}

func (p *Progress) say(format string, args ...any) {
	if p.live == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.live, format, args...)
}

// RunStarted records the start of a run; the engine has no such event
// because the host knows the branch, base commit and run directory, not
// the engine. The run directory is said first: it holds the logs to read
// while the run goes on.
func (p *Progress) RunStarted(runID, pipeline, branch, baseSHA, runDir string) error {
	p.say("kilroy: run %s of %s on %s (base %s)\nkilroy: run directory %s\n", runID, pipeline, branch, short(baseSHA), runDir)
	return p.emit(event{Type: "run_started", RunID: runID, Pipeline: pipeline, Branch: branch, BaseSHA: baseSHA})
}

func (p *Progress) NodeStarted(_ context.Context, ev attractor.NodeStarted) error {
	p.say("  %-24s started\n", ev.Node.ID)
	return p.emit(event{Type: "node_started", RunID: ev.RunID, Node: ev.Node.ID})
}

func (p *Progress) AttemptFinished(_ context.Context, ev attractor.AttemptFinished) error {
	o := ev.Outcome
	line := fmt.Sprintf("  %-24s %-16s %8s", ev.Node.ID, o.Status, ev.Duration.Round(time.Millisecond))
	switch {
	case !ev.Final:
		line += fmt.Sprintf("  attempt %d of %d, retrying", ev.Attempt, ev.Node.MaxRetries+1)
	case ev.Attempt > 1:
		line += fmt.Sprintf("  after %d attempts", ev.Attempt)
	}
	if o.Usage != nil {
		line += "  " + o.Usage.String()
		p.mu.Lock()
		p.usage.Add(*o.Usage)
		p.mu.Unlock()
	}
	if o.FailureReason != "" && o.Status != attractor.StatusSuccess {
		line += "  " + firstLine(o.FailureReason)
	}
	p.say("%s\n", line)
	typ := "attempt_finished"
	if ev.Final {
		typ = "node_finished"
	}
	return p.emit(event{
		Type: typ, RunID: ev.RunID, Node: ev.Node.ID, Attempt: ev.Attempt,
		Status: string(o.Status), FailureClass: string(o.FailureClass), Reason: o.FailureReason,
		DurationMS: ev.Duration.Milliseconds(), Usage: o.Usage,
	})
}

func (p *Progress) EdgeSelected(_ context.Context, ev attractor.EdgeSelected) error {
	return p.emit(event{Type: "edge_selected", RunID: ev.RunID, From: ev.From, To: ev.To, Method: string(ev.Method)})
}

func (p *Progress) Checkpointed(_ context.Context, ev attractor.Checkpointed) error {
	return p.emit(event{Type: "checkpoint", RunID: ev.RunID, Node: ev.Node, Status: string(ev.Status), SHA: ev.SHA})
}

func (p *Progress) RunFinished(_ context.Context, res *attractor.RunResult) error {
	p.say("kilroy: run %s %s in %s", res.RunID, res.Status, res.Duration.Round(time.Millisecond))
	if res.FailureReason != "" {
		p.say(": %s", firstLine(res.FailureReason))
	}
	p.say("\n")
	p.mu.Lock()
	total := p.usage
	p.mu.Unlock()
	ev := event{
		Type: "run_finished", RunID: res.RunID, Status: string(res.Status),
		FailureClass: string(res.FailureClass), Reason: res.FailureReason, Node: res.FailedNode,
		DurationMS: res.Duration.Milliseconds(),
	}
	if total.Attempts > 0 {
		ev.UsageTotal = &total
	}
	return p.emit(ev)
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

func firstLine(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}
