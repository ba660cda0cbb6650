package dot

import "strings"

// nodeID checks that t, already consumed, is a usable node ID and that no
// port or undirected edge follows it.
func (p *parser) nodeID(t token) (Ident, error) {
	switch {
	case strings.Contains(t.raw, "."):
		return Ident{}, errorf(t.pos, "node ID %q contains \".\": %s", t.raw, bareIDHint)
	case isKeyword(t.raw):
		return Ident{}, errorf(t.pos, "%q is a DOT keyword and cannot be a node ID; choose another ID", t.raw)
	}
	switch p.tok.kind {
	case tColon:
		port := t.raw + ":" + p.lx.peekKey()
		return Ident{}, errorf(p.tok.pos, "node ports are not supported (%q): edges connect whole nodes; write %q", port, t.raw)
	case tUndirected:
		return Ident{}, errorf(p.tok.pos, "undirected edge \"--\" is not supported: use \"->\"")
	}
	return Ident{Name: t.raw, Pos: t.pos}, nil
}

// edge parses the rest of `a -> b -> c [..]`; the current token is the
// first "->".
func (p *parser) edge(first Ident) (Stmt, error) {
	s := &EdgeStmt{Nodes: append(make([]Ident, 0, 2), first)}
	for p.tok.kind == tArrow {
		if err := p.next(); err != nil {
			return nil, err
		}
		id, err := p.endpoint()
		if err != nil {
			return nil, err
		}
		s.Nodes = append(s.Nodes, id)
	}
	var err error
	s.Attrs, err = p.attrLists()
	return s, err
}

// endpoint parses the node ID after "->".
func (p *parser) endpoint() (Ident, error) {
	t := p.tok
	switch {
	case t.kind == tString:
		return Ident{}, errorf(t.pos, "quoted node ID %s: %s", excerpt(t.raw), bareIDHint)
	case t.kind == tLBrace || t.kind == tIdent && strings.EqualFold(t.raw, "subgraph"):
		return Ident{}, errorf(t.pos, "edges to subgraphs are not supported: write an edge for each node, e.g. a -> b")
	case t.kind != tIdent:
		return Ident{}, p.unexpected("a node ID after \"->\"")
	}
	if err := p.next(); err != nil {
		return Ident{}, err
	}
	return p.nodeID(t)
}
