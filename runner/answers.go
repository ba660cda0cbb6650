package runner

import (
	"context"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// Answers answers wait.human nodes from answers given up front
// (`--answer NODE=LABEL`) and asks Fallback for the rest.
type Answers struct {
	ByNode   map[string]string
	Fallback attractor.Interviewer
}

// Ask returns the given answer for q.Node, else the fallback's.
func (a Answers) Ask(ctx context.Context, q attractor.Question) (attractor.Answer, error) {
	if label, ok := a.ByNode[q.Node]; ok {
		return attractor.Answer{Choice: label}, nil
	}
	return a.Fallback.Ask(ctx, q)
}
