package agent

import (
	"context"
	"fmt"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// What to do when a host has no agents configuration, for the failure of
// a node that needs one: a local run reads it from the file --agents
// names, a server from its policy file.
const (
	MissingLocal = "pass --agents FILE to kilroy-bot run (a YAML file whose agents: key lists the backends; " +
		"kilroy-bot init --template agent-fix writes a commented one, .kilroy/agents.yml)"
	MissingServe = "set agents.backends in the server policy file (kilroy-bot serve --config FILE, or KILROY_CONFIG)"
	// ServePolicy is the Deps.Where of a server.
	ServePolicy = "the server policy file, kilroy-bot serve --config FILE or KILROY_CONFIG"
)

// Missing is the agent of a host that has no agent configuration at all:
// every codergen node fails structural, saying where to configure one.
type Missing struct{ Where string }

var _ attractor.Agent = Missing{}

// Run fails the node without running anything.
func (m Missing) Run(_ context.Context, req attractor.AgentRequest) (attractor.Outcome, error) {
	return *structural(fmt.Sprintf("node %s needs a coding agent and none is configured: %s; "+
		"or give the node shape=parallelogram with tool_command if it runs a command", req.Node.ID, m.Where)), nil
}

// CanRun says why no backend of cfg could run node n: it asks for one cfg
// does not have, a model it does not allow, or a key that host lacks. ""
// means one could. It is what a run would fail the node with, found
// before the run (kilroy-bot validate --agents FILE).
func CanRun(cfg Config, host map[string]string, n *attractor.Node) (string, error) {
	a, err := New(cfg, Deps{HostEnv: host})
	if err != nil {
		return "", err
	}
	sel, fail := a.selectBackend(n)
	if fail == nil {
		_, fail = a.providerKey(sel)
	}
	if fail != nil {
		return fail.FailureReason, nil
	}
	return "", nil
}
