package attractor

import (
	"fmt"
	"strings"
)

// childSep joins a house node's ID and a child node's ID: the child's
// nodes run as <house>/<child>, which is what their checkpoint commits
// (Kilroy-Node trailer), stage directories, checks and state entries say.
const childSep = "/"

// managerDepth is how deep a house node is nested: 1 for a house of the
// run's own pipeline, 2 for one in its child, and so on.
func managerDepth(id string) int { return strings.Count(id, childSep) + 1 }

// loadChild reads the child pipeline of house node n from the workspace,
// loads and validates it, and returns it with its node IDs qualified by
// n's. The file is read when the house runs, so an earlier node may have
// written it.
func (r *run) loadChild(n *Node, ms managerSpec) (*Pipeline, error) {
	src, err := readChildFile(r.cfg.Workspace, ms.childFile)
	if err != nil {
		return nil, err
	}
	p, ds, err := Load(ms.childFile, src)
	if err != nil {
		if p == nil || len(ds.Errors()) == 0 {
			return nil, fmt.Errorf("child pipeline %s: %w", ms.childFile, err)
		}
		return nil, fmt.Errorf("child pipeline %s does not validate: %s", ms.childFile, firstDiagnostics(ds.Errors(), 3))
	}
	return qualify(p, n.ID+childSep), nil
}

// firstDiagnostics lists up to max diagnostics on one line.
func firstDiagnostics(ds Diagnostics, max int) string {
	var parts []string
	for i, d := range ds {
		if i == max {
			parts = append(parts, fmt.Sprintf("and %d more", len(ds)-max))
			break
		}
		parts = append(parts, d.String())
	}
	return strings.Join(parts, "; ")
}

// qualify returns a copy of p whose node IDs (and every reference to
// one: edges, retry targets) carry prefix. p is not changed.
func qualify(p *Pipeline, prefix string) *Pipeline {
	q := *p
	ref := func(id string) string {
		if id == "" {
			return ""
		}
		return prefix + id
	}
	q.Nodes = make([]*Node, len(p.Nodes))
	for i, n := range p.Nodes {
		c := *n
		c.ID = ref(n.ID)
		if n.Label == n.ID {
			c.Label = c.ID
		}
		c.RetryTarget, c.FallbackRetryTarget = ref(n.RetryTarget), ref(n.FallbackRetryTarget)
		q.Nodes[i] = &c
	}
	q.Edges = make([]*Edge, len(p.Edges))
	for i, e := range p.Edges {
		c := *e
		c.From, c.To = ref(e.From), ref(e.To)
		q.Edges[i] = &c
	}
	q.RetryTarget, q.FallbackRetryTarget = ref(p.RetryTarget), ref(p.FallbackRetryTarget)
	q.index()
	return &q
}
