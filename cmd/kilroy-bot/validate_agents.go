package main

import (
	"os"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/runner/agent"
)

// agentsCheck is what validate checks box nodes against: the agents
// configuration --agents names (in a repository check without it, the
// .kilroy/agents.yml init writes, when there is one), or none, and the
// environment whose keys a run from this shell would have.
type agentsCheck struct {
	repo bool          // checking a repository's .kilroy/, not given files
	path string        // "" without an agents file
	cfg  *agent.Config // nil without --agents
	host map[string]string
}

// diagnostics warns about box nodes no backend could run: in a repository
// check without an agents file once per pipeline (a run without one fails
// them all), with one per node, with the reason the run would give.
// Checking given files without --agents says nothing about agents.
func (ac agentsCheck) diagnostics(p *attractor.Pipeline) attractor.Diagnostics {
	if p == nil || (ac.cfg == nil && !ac.repo) {
		return nil
	}
	var boxes []*attractor.Node
	for _, n := range p.Nodes {
		if n.Kind == attractor.KindCodergen {
			boxes = append(boxes, n)
		}
	}
	if len(boxes) == 0 {
		return nil
	}
	if ac.cfg == nil {
		ids := make([]string, len(boxes))
		for i, n := range boxes {
			ids[i] = n.ID
		}
		who := "node " + ids[0] + " runs a coding agent"
		if len(ids) > 1 {
			who = "nodes " + strings.Join(ids, ", ") + " run coding agents"
		}
		return attractor.Diagnostics{agentWarning(p, boxes[0], who+" (shape=box), and no agent backend is given to check against",
			"give kilroy-bot run and validate --agents FILE (init --template agent-fix writes .kilroy/agents.yml); serve reads agents: from --config")}
	}
	var ds attractor.Diagnostics
	for _, n := range boxes {
		why, err := agent.CanRun(*ac.cfg, ac.host, n)
		if err != nil {
			why = err.Error()
		}
		if why != "" {
			ds = append(ds, agentWarning(p, n, "no agent backend in "+ac.path+" can run it: "+why,
				"fix agents.backends in "+ac.path+", or the node's llm_provider / llm_model"))
		}
	}
	return ds
}

func agentWarning(p *attractor.Pipeline, n *attractor.Node, msg, fix string) attractor.Diagnostic {
	return attractor.Diagnostic{Rule: "agent_backend", Severity: attractor.SeverityWarning,
		File: p.File, Line: max(n.Pos.Line, 1), Col: max(n.Pos.Col, 1), Node: n.ID, Message: msg, Fix: fix}
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
