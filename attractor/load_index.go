package attractor

// index builds the lookup tables of p from Nodes and Edges. Load calls it
// once; hand-built pipelines may call Reindex after changing them.
func (p *Pipeline) index() {
	p.byID = make(map[string]*Node, len(p.Nodes))
	for _, n := range p.Nodes {
		if p.byID[n.ID] == nil {
			p.byID[n.ID] = n
		}
	}
	p.out = make(map[string][]*Edge, len(p.Nodes))
	p.in = make(map[string][]*Edge, len(p.Nodes))
	for _, e := range p.Edges {
		p.out[e.From] = append(p.out[e.From], e)
		p.in[e.To] = append(p.in[e.To], e)
	}
}

// Reindex rebuilds the node and edge lookup tables after Nodes or Edges
// were changed by hand (tests building pipelines without Load).
func (p *Pipeline) Reindex() { p.index() }

// clip returns s with its capacity cut to its length, so that a caller
// appending to a result of Outgoing cannot write into the index.
func clip(s []*Edge) []*Edge { return s[:len(s):len(s)] }
