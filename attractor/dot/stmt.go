package dot

import "strings"

// stmt parses one statement of a graph or subgraph body.
func (p *parser) stmt() (Stmt, error) {
	t := p.tok
	switch t.kind {
	case tIdent:
		return p.identStmt()
	case tLBrace:
		return p.subgraph()
	case tString:
		return nil, errorf(t.pos, "quoted node ID %s: %s", excerpt(t.raw), bareIDHint)
	case tNumber:
		return nil, errorf(t.pos, "node ID %q starts with a digit: %s", t.raw, bareIDHint)
	}
	return nil, p.unexpected("a statement (node, edge, attribute or subgraph)")
}

// identStmt parses a statement that starts with an identifier: a keyword
// statement, `key = value`, a node or an edge.
func (p *parser) identStmt() (Stmt, error) {
	t := p.tok
	switch t.raw {
	case "graph":
		return p.attrStmt(GraphAttrs)
	case "node":
		return p.attrStmt(NodeAttrs)
	case "edge":
		return p.attrStmt(EdgeAttrs)
	case "subgraph":
		return p.subgraph()
	}
	if isKeyword(t.raw) {
		return nil, p.misplacedKeyword(t)
	}
	if err := p.next(); err != nil {
		return nil, err
	}
	if p.tok.kind == tEq {
		return p.assign(t)
	}
	id, err := p.nodeID(t)
	if err != nil {
		return nil, err
	}
	if p.tok.kind == tArrow {
		return p.edge(id)
	}
	attrs, err := p.attrLists()
	return &NodeStmt{ID: id, Attrs: attrs}, err
}

// misplacedKeyword explains a keyword that cannot start a statement.
func (p *parser) misplacedKeyword(t token) error {
	switch lower := strings.ToLower(t.raw); lower {
	case "digraph", "strict":
		return errorf(t.pos, "unexpected keyword %q inside the graph: a file holds one graph; use `subgraph NAME { ... }` to group nodes", t.raw)
	default:
		return errorf(t.pos, "%q is a DOT keyword (DOT ignores case in keywords): write %q for %s, or choose another node ID", t.raw, lower, keywordUse(lower))
	}
}

func keywordUse(k string) string {
	if k == "subgraph" {
		return "a subgraph"
	}
	return k + " defaults"
}

// attrStmt parses `graph [..]`, `node [..]` or `edge [..]`.
func (p *parser) attrStmt(kind AttrStmtKind) (Stmt, error) {
	s := &AttrStmt{Pos: p.tok.pos, Kind: kind}
	if err := p.next(); err != nil {
		return nil, err
	}
	if p.tok.kind != tLBrack {
		return nil, p.unexpected("\"[\" after %q (%q is a keyword, not a node ID)", kind, kind)
	}
	var err error
	s.Attrs, err = p.attrLists()
	return s, err
}

// assign parses `key = value`; the current token is "=".
func (p *parser) assign(key token) (Stmt, error) {
	a, err := p.attrValue(key)
	return &AssignStmt{Attr: a}, err
}

// subgraph parses `subgraph ID? { .. }` or an anonymous `{ .. }`.
func (p *parser) subgraph() (Stmt, error) {
	s := &Subgraph{Pos: p.tok.pos}
	if p.depth++; p.depth > maxDepth {
		return nil, errorf(s.Pos, "subgraphs nested more than %d levels deep", maxDepth)
	}
	defer func() { p.depth-- }()
	what := "the block"
	if p.tok.kind == tIdent {
		if err := p.next(); err != nil {
			return nil, err
		}
		id, _, err := p.optionalID("subgraph")
		if err != nil {
			return nil, err
		}
		s.ID, what = id, "the subgraph"
	}
	var err error
	if s.Stmts, err = p.block(what); err != nil {
		return nil, err
	}
	if p.tok.kind == tArrow || p.tok.kind == tUndirected {
		return nil, errorf(p.tok.pos, "edges from subgraphs are not supported: write an edge for each node, e.g. a -> b")
	}
	return s, nil
}
