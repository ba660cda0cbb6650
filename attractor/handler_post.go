package attractor

import (
	"context"
	"fmt"
)

// verifiedKinds are the kinds whose success verify_command re-checks
// (trustless verification: a node's own claim of success is not enough).
func verifiedKind(k Kind) bool {
	switch k {
	case KindCodergen, KindConditional, KindFanIn, KindExit:
		return true
	}
	return false
}

// postVerify runs the node's verify_command after a successful attempt;
// a failing command turns the success into a FAIL quoting its output.
func postVerify(ctx context.Context, s *Stage, o Outcome) Outcome {
	cmd := s.Node.VerifyCommand
	if cmd == "" || !verifiedKind(s.Node.Kind) || !o.Succeeded() {
		return o
	}
	res, err := s.Shell(ctx, "verify", cmd, s.timeout())
	if err != nil && ctx.Err() != nil {
		return failOutcome(ClassCanceled, fmt.Sprintf("verify_command was not started: %v", err))
	}
	if err != nil {
		return failOutcome(ClassDeterministic, fmt.Sprintf("could not start verify_command: %v", err))
	}
	if res.ExitCode == 0 && !res.TimedOut && !res.Canceled {
		o.Notes = joinNotes(o.Notes, "verify_command passed")
		return o
	}
	f := processFailure(ctx, "verify_command", s.timeout(), res)
	f.ContextUpdates = o.ContextUpdates
	f.Findings = append(o.Findings, s.findings("verify")...)
	f.Notes = o.Notes
	return f
}
