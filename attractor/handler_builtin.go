package attractor

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// builtinHandler returns the engine's handler for a kind; parallel and
// manager loop nodes are run by the engine itself (see handlerFor).
func builtinHandler(k Kind) (Handler, bool) {
	switch k {
	case KindStart, KindExit:
		return HandlerFunc(noopHandler), true
	case KindConditional:
		return HandlerFunc(conditionalHandler), true
	case KindTool:
		return HandlerFunc(toolHandler), true
	case KindVerify:
		return HandlerFunc(verifyHandler), true
	case KindVerifyArtifacts:
		return HandlerFunc(artifactsHandler), true
	case KindCodergen:
		return HandlerFunc(codergenHandler), true
	case KindWaitHuman:
		return HandlerFunc(humanHandler), true
	case KindFanIn:
		return HandlerFunc(fanInHandler), true
	}
	return nil, false
}

// builtinTypes lists the type strings the engine knows, for messages.
func builtinTypes() []string {
	ks := []Kind{KindStart, KindExit, KindCodergen, KindTool, KindVerify, KindVerifyArtifacts,
		KindConditional, KindWaitHuman, KindParallel, KindFanIn}
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = string(k)
	}
	return out
}

// unknownTypeHandler fails a node whose type has no handler.
func unknownTypeHandler(typ string, custom []string) Handler {
	return HandlerFunc(func(context.Context, *Stage) (Outcome, error) {
		known := append(builtinTypes(), custom...)
		slices.Sort(known)
		return failOutcome(ClassStructural, fmt.Sprintf(
			"unknown node type %q: use one of %s, or register a handler for it", typ, strings.Join(known, ", "))), nil
	})
}

// noopHandler is start and exit: the engine checks goal gates and runs
// verify_command around them.
func noopHandler(context.Context, *Stage) (Outcome, error) {
	return Outcome{Status: StatusSuccess}, nil
}

// conditionalHandler passes the previous node's verdict through (status,
// label, reason, class, signature) so the diamond's condition edges route
// on it; the engine runs verify_command afterwards.
func conditionalHandler(_ context.Context, s *Stage) (Outcome, error) {
	prev := s.PredecessorOutcome
	if prev == nil {
		return Outcome{Status: StatusSuccess, Notes: "conditional " + s.Node.ID + ": no previous outcome"}, nil
	}
	return Outcome{
		Status:           prev.Status,
		PreferredLabel:   prev.PreferredLabel,
		SuggestedNextIDs: prev.SuggestedNextIDs,
		FailureReason:    prev.FailureReason,
		FailureClass:     prev.FailureClass,
		FailureSignature: prev.FailureSignature,
		Notes:            "conditional " + s.Node.ID + ": passed through " + s.Predecessor,
	}, nil
}

// artifactsHandler delegates verify.artifacts to the host's artifact
// checker (package runner owns the policy and git).
func artifactsHandler(ctx context.Context, s *Stage) (Outcome, error) {
	ac, ok := s.Host.(ArtifactChecker)
	if !ok {
		return failOutcome(ClassStructural, fmt.Sprintf(
			"node %s: verify.artifacts needs an artifact checker, and this host provides none; run the pipeline with kilroy-bot run or serve", s.Node.ID)), nil
	}
	return ac.CheckArtifacts(ctx, ArtifactCheckRequest{RunID: s.RunID, Node: s.Node, Workspace: s.Workspace, StageDir: s.Dir})
}
