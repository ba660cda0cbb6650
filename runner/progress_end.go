package runner

import (
	"errors"
	"fmt"
	"os"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// progress.ndjson ends with one terminal line, run_completed or
// run_failed, as Kilroy's does: tools tail the file until they see it.
// The host writes it (Prepared.Finish) once it is done with the run: after
// the report and the final push of the run branch, so a reader that sees
// it finds both. A run that stops to be resumed (a server shutting down)
// gets none; its resumption writes it.

// How a run ended, in the terminal line's status field.
const (
	EndSuccess  = "success"
	EndFail     = "fail"
	EndCanceled = "canceled"
)

// RunEnd is how a run ended: one of the End statuses and, unless it
// succeeded, why.
type RunEnd struct {
	Status       string
	Reason       string
	FailureClass attractor.FailureClass // "" when unknown
	Node         string                 // the node the failure is attributed to, if any
}

// EndOf is how a run with result res ended; err is a run that could not
// run (Execute's error), which fails it.
func EndOf(res *attractor.RunResult, err error) RunEnd {
	switch {
	case err != nil:
		return RunEnd{Status: EndFail, Reason: err.Error()}
	case res == nil:
		return RunEnd{Status: EndFail, Reason: "the run ended without a result"}
	case res.FailureClass == attractor.ClassCanceled:
		return RunEnd{Status: EndCanceled, Reason: res.FailureReason, FailureClass: res.FailureClass, Node: res.FailedNode}
	case res.Status == attractor.StatusSuccess:
		return RunEnd{Status: EndSuccess}
	}
	return RunEnd{Status: EndFail, Reason: res.FailureReason, FailureClass: res.FailureClass, Node: res.FailedNode}
}

// Finish appends the run's terminal line to progress.ndjson. Call it last,
// once the report is written and the run branch pushed.
func (p *Prepared) Finish(end RunEnd) error {
	root, err := os.OpenRoot(string(p.Dir))
	if err != nil {
		return fmt.Errorf("finish progress.ndjson: %w", err)
	}
	defer root.Close()
	f, err := root.OpenFile("progress.ndjson", os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("finish progress.ndjson: %w", err)
	}
	werr := NewProgress(f, nil).RunEnded(p.RunID, end)
	return errors.Join(werr, f.Close())
}

// RunEnded writes the terminal line: run_completed for a success,
// run_failed for a failure or a cancellation.
func (p *Progress) RunEnded(runID string, end RunEnd) error {
	typ := "run_failed"
	if end.Status == EndSuccess {
		typ = "run_completed"
	}
	return p.emit(event{Type: typ, RunID: runID, Status: end.Status, Reason: end.Reason,
		FailureClass: string(end.FailureClass), Node: end.Node})
}
