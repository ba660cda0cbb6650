package runner

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

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
	if a.Fallback == nil {
		return attractor.Answer{}, fmt.Errorf("no answer given for human gate %s", q.Node)
	}
	return a.Fallback.Ask(ctx, q)
}

// Check refuses, with ErrUsage, answers the pipeline could never use: a
// node that does not exist or is no human gate, a label none of the gate's
// choices has. Checked before the run starts, a typo is a usage error with
// a did-you-mean, not a surprise at the gate or an answer silently unused.
func (a Answers) Check(p *attractor.Pipeline) error {
	gates := humanGates(p)
	for _, node := range slices.Sorted(maps.Keys(a.ByNode)) {
		label := a.ByNode[node]
		if inChild(p, node) {
			continue // the child pipeline is read when its house node runs
		}
		if !slices.Contains(gates, node) {
			return fmt.Errorf("%w: --answer %s=%s: %s", ErrUsage, node, label, notAGate(p, node, gates))
		}
		choices := p.HumanChoices(node)
		if _, ok := attractor.MatchChoice(label, choices); !ok {
			return fmt.Errorf("%w: --answer %s=%s: %s", ErrUsage, node, label, notALabel(node, label, choices))
		}
	}
	return nil
}

// inChild reports a node of a manager loop's child pipeline,
// <house>/<child>, where house is a manager loop node of p.
func inChild(p *attractor.Pipeline, node string) bool {
	house, _, ok := strings.Cut(node, "/")
	n := p.Node(house)
	return ok && n != nil && n.Kind == attractor.KindManagerLoop
}

// humanGates lists the IDs of the pipeline's wait.human nodes.
func humanGates(p *attractor.Pipeline) []string {
	var ids []string
	for _, n := range p.Nodes {
		if n.Kind == attractor.KindWaitHuman {
			ids = append(ids, n.ID)
		}
	}
	return ids
}

func notAGate(p *attractor.Pipeline, node string, gates []string) string {
	msg := fmt.Sprintf("pipeline %s has no node %q", p.Name, node)
	if p.Node(node) != nil {
		msg = fmt.Sprintf("node %q is not a human gate (shape=hexagon)", node)
	}
	if len(gates) == 0 {
		return msg + "; the pipeline has no human gate to answer"
	}
	msg += fmt.Sprintf(" (human gates: %s)", strings.Join(gates, ", "))
	if s := attractor.Suggest(node, gates); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return msg
}

func notALabel(node, label string, choices []attractor.Choice) string {
	var labels []string
	for _, c := range choices {
		labels = append(labels, c.Label)
	}
	msg := fmt.Sprintf("gate %s offers %s (a label, its key or the target node)", node, strings.Join(labels, ", "))
	if s := attractor.SuggestChoice(label, choices); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return msg
}
