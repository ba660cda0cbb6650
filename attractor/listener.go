package attractor

import (
	"context"
	"errors"
	"time"
)

// Listener hears every step of a run. Check runs, logs, metrics and the
// run store are listeners; the engine keeps no state beyond the run.
//
// Methods are called from the goroutine that owns the run, in order, so
// they must return quickly (hand slow work to a queue). An error is logged
// and otherwise ignored: a reporting hiccup must not fail a pipeline.
type Listener interface {
	NodeStarted(ctx context.Context, ev NodeStarted) error
	AttemptFinished(ctx context.Context, ev AttemptFinished) error
	EdgeSelected(ctx context.Context, ev EdgeSelected) error
	Checkpointed(ctx context.Context, ev Checkpointed) error
	RunFinished(ctx context.Context, res *RunResult) error
}

// NodeStarted is reported before a node's first attempt of a visit.
type NodeStarted struct {
	RunID string
	Node  *Node
	Visit int    // 1 on the first visit
	Dir   string // stage directory
}

// AttemptFinished is reported after every attempt, retries included,
// once the attempt's status.json and invocation.json are written. A
// node's last attempt is reported once the host has made its checkpoint
// (the files are written meanwhile), just before Checkpointed.
type AttemptFinished struct {
	RunID    string
	Node     *Node
	Attempt  int // 1-based within the visit
	Final    bool
	Outcome  Outcome
	Duration time.Duration
	Dir      string
}

// EdgeMethod says which rule chose a transition.
type EdgeMethod string

const (
	ByCondition      EdgeMethod = "condition"
	ByPreferredLabel EdgeMethod = "preferred_label"
	BySuggested      EdgeMethod = "suggested"
	ByWeight         EdgeMethod = "weight"
	ByLexical        EdgeMethod = "lexical"
	ByRetryTarget    EdgeMethod = "retry_target"
	ByGoalGate       EdgeMethod = "goal_gate"
	ByFanIn          EdgeMethod = "fan_in" // parallel node → its fan-in node
)

// EdgeSelected is reported for every transition. Edge is nil for jumps
// that follow no edge (retry targets, goal gates, fan-in).
type EdgeSelected struct {
	RunID       string
	From, To    string
	Method      EdgeMethod
	Edge        *Edge
	LoopRestart bool
}

// Checkpointed is reported after the host checkpointed a node.
type Checkpointed struct {
	RunID  string
	Node   string
	Status Status
	SHA    string
}

// Listeners fans every event out to each listener in order.
type Listeners []Listener

func (ls Listeners) NodeStarted(ctx context.Context, ev NodeStarted) error {
	return ls.each(func(l Listener) error { return l.NodeStarted(ctx, ev) })
}

func (ls Listeners) AttemptFinished(ctx context.Context, ev AttemptFinished) error {
	return ls.each(func(l Listener) error { return l.AttemptFinished(ctx, ev) })
}

func (ls Listeners) EdgeSelected(ctx context.Context, ev EdgeSelected) error {
	return ls.each(func(l Listener) error { return l.EdgeSelected(ctx, ev) })
}

func (ls Listeners) Checkpointed(ctx context.Context, ev Checkpointed) error {
	return ls.each(func(l Listener) error { return l.Checkpointed(ctx, ev) })
}

func (ls Listeners) RunFinished(ctx context.Context, res *RunResult) error {
	return ls.each(func(l Listener) error { return l.RunFinished(ctx, res) })
}

// each calls f on every listener, even after one fails.
func (ls Listeners) each(f func(Listener) error) error {
	var errs []error
	for _, l := range ls {
		if l == nil {
			continue
		}
		if err := f(l); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// NopListener ignores every event; embed it to implement only some methods.
type NopListener struct{}

func (NopListener) NodeStarted(context.Context, NodeStarted) error         { return nil }
func (NopListener) AttemptFinished(context.Context, AttemptFinished) error { return nil }
func (NopListener) EdgeSelected(context.Context, EdgeSelected) error       { return nil }
func (NopListener) Checkpointed(context.Context, Checkpointed) error       { return nil }
func (NopListener) RunFinished(context.Context, *RunResult) error          { return nil }
