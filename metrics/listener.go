package metrics

import (
	"context"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// Listener is an attractor.Listener that feeds the run and node series.
// Add it to every run's listeners; it does no I/O and never fails.
type Listener struct {
	attractor.NopListener
	m *Metrics
}

var _ attractor.Listener = (*Listener)(nil)

// Listener returns the engine listener that feeds m.
func (m *Metrics) Listener() *Listener { return &Listener{m: m} }

// AttemptFinished observes the attempt's duration by node kind and status.
func (l *Listener) AttemptFinished(_ context.Context, ev attractor.AttemptFinished) error {
	kind := "other"
	if ev.Node != nil {
		kind = knownOr(knownKinds, string(ev.Node.Kind))
	}
	l.m.nodeDuration.WithLabelValues(kind, knownOr(knownStatuses, string(ev.Outcome.Status))).Observe(ev.Duration.Seconds())
	return nil
}

// RunFinished counts the run by its conclusion.
func (l *Listener) RunFinished(_ context.Context, res *attractor.RunResult) error {
	if res != nil {
		l.m.runs.WithLabelValues(Conclusion(res)).Inc()
	}
	return nil
}

// Conclusion is "success", "cancelled" or "failure": a run cancelled or
// superseded ends with the canceled failure class, every other
// non-success is a failure.
func Conclusion(res *attractor.RunResult) string {
	switch {
	case res.Status == attractor.StatusSuccess || res.Status == attractor.StatusPartialSuccess:
		return "success"
	case res.FailureClass == attractor.ClassCanceled:
		return "cancelled"
	}
	return "failure"
}

// knownKinds are the engine's built-in node kinds. A pipeline comes from a
// repository and may name any type=, so other kinds count as "other".
var knownKinds = map[string]bool{
	string(attractor.KindStart): true, string(attractor.KindExit): true,
	string(attractor.KindCodergen): true, string(attractor.KindTool): true,
	string(attractor.KindVerify): true, string(attractor.KindVerifyArtifacts): true,
	string(attractor.KindConditional): true, string(attractor.KindWaitHuman): true,
	string(attractor.KindParallel): true, string(attractor.KindFanIn): true,
	string(attractor.KindManagerLoop): true,
}

// knownStatuses are the canonical outcome statuses; the engine
// canonicalises them, but a label set must not depend on that.
var knownStatuses = map[string]bool{
	string(attractor.StatusSuccess): true, string(attractor.StatusPartialSuccess): true,
	string(attractor.StatusRetry): true, string(attractor.StatusFail): true,
	string(attractor.StatusSkipped): true,
}
