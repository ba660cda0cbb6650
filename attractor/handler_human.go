package attractor

import (
	"context"
	"errors"
	"fmt"
)

// humanHandler asks the interviewer to choose among the node's outgoing
// edges and routes on the answer through preferred_label. The node's
// timeout bounds the question: an interviewer that waits (a pull request
// comment) ends with it, and the wait then counts as timed out, so that
// human.default_choice applies.
func humanHandler(ctx context.Context, s *Stage) (Outcome, error) {
	choices := humanChoices(s.Pipeline.Outgoing(s.Node.ID))
	if len(choices) == 0 {
		return failOutcome(ClassStructural, fmt.Sprintf("human gate %s has no outgoing edges to choose from", s.Node.ID)), nil
	}
	if s.Interviewer == nil {
		return failOutcome(ClassStructural, fmt.Sprintf(
			"human gate %s needs an interviewer and none is configured", s.Node.ID)), nil
	}
	qctx, cancel := nodeContext(ctx, s.Node.Timeout)
	defer cancel()
	a, err := s.Interviewer.Ask(qctx, Question{RunID: s.RunID, Node: s.Node.ID, Text: s.Node.Label, Choices: choices})
	switch {
	case err != nil && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		a = Answer{TimedOut: true}
	case err != nil:
		return failOutcome(classifyError(err), fmt.Sprintf("human gate %s: %v", s.Node.ID, err)), nil
	}
	if a.TimedOut {
		def, ok := s.Node.Attrs.Get("human.default_choice")
		if !ok {
			return Outcome{Status: StatusRetry, FailureReason: "human gate timed out and has no human.default_choice"}, nil
		}
		a = Answer{Choice: def}
	}
	if a.Skipped {
		return failOutcome(ClassDeterministic, fmt.Sprintf("human gate %s: the question was skipped", s.Node.ID)), nil
	}
	c, ok := matchChoice(a, choices)
	if !ok {
		return failOutcome(ClassDeterministic, fmt.Sprintf(
			"human gate %s: answer %q matches none of the choices", s.Node.ID, a.Choice)), nil
	}
	return Outcome{
		Status:           StatusSuccess,
		PreferredLabel:   c.Label,
		SuggestedNextIDs: []string{c.To},
		ContextUpdates: map[string]any{
			"human.gate.selected": c.Key,
			"human.gate.label":    c.Label,
			"human.gate.text":     a.Text,
		},
	}, nil
}

// HumanChoices returns the choices the wait.human node id offers, as the
// engine will ask them, so a host can check answers given up front.
func (p *Pipeline) HumanChoices(id string) []Choice { return humanChoices(p.Outgoing(id)) }

// humanChoices offers each outgoing edge once, labelled by its label or
// else its target.
func humanChoices(edges []*Edge) []Choice {
	var out []Choice
	for _, e := range edges {
		label := e.Label
		if label == "" {
			label = e.To
		}
		out = append(out, Choice{Key: acceleratorKey(label), Label: label, To: e.To})
	}
	return out
}
