package attractor

import (
	"maps"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor/dot"
)

// builder turns an AST into a Pipeline. It walks the statements once,
// checking every written attribute once (so a bad default is reported
// once, where it is written), then resolves typed fields.
type builder struct {
	p       *Pipeline
	r       reporter
	conds   map[dot.Pos]*Condition // parsed conditions by value position
	derived map[*Node][]string     // classes from enclosing subgraph labels
	names   *attrNames
	// aliased holds the spelling an attribute was written in, by key
	// position, where it was another engine's (max_visits): messages name
	// the attribute as the author wrote it.
	aliased map[dot.Pos]string
}

// scope is what statements inherit from their enclosing (sub)graph.
// Default maps are replaced, never mutated, so a subgraph's changes do
// not leak out to its parent.
type scope struct {
	nodeDefaults Attrs
	edgeDefaults Attrs
	classes      []string
}

func build(file string, g *dot.Graph) (*Pipeline, Diagnostics) {
	b := &builder{
		p:       &Pipeline{File: file, Name: g.ID, Pos: g.Pos, Attrs: Attrs{}},
		conds:   map[dot.Pos]*Condition{},
		derived: map[*Node][]string{},
		names:   newAttrNames(),
		aliased: map[dot.Pos]string{},
	}
	b.p.byID = map[string]*Node{}
	b.walk(g.Stmts, scope{}, true)
	b.resolveGraph()
	b.resolveNodes()
	for _, e := range b.p.Edges {
		b.resolveEdge(e)
	}
	b.fallbackTerminals()
	b.p.index()
	return b.p, b.r.diags
}

func (b *builder) walk(stmts []dot.Stmt, sc scope, top bool) {
	for _, st := range stmts {
		switch s := st.(type) {
		case *dot.AttrStmt:
			attrs := b.check(attrWhereOf(s.Kind), s.Attrs)
			switch s.Kind {
			case dot.GraphAttrs:
				if top {
					b.graphAttrs(attrs)
				}
			case dot.NodeAttrs:
				sc.nodeDefaults = withAttrs(sc.nodeDefaults, attrs, FromDefault)
			case dot.EdgeAttrs:
				sc.edgeDefaults = withAttrs(sc.edgeDefaults, attrs, FromDefault)
			}
		case *dot.AssignStmt:
			attrs := b.check(onGraph, []dot.Attr{s.Attr})
			if top {
				b.graphAttrs(attrs)
			}
		case *dot.NodeStmt:
			b.declare(s, b.check(onNode, s.Attrs), sc)
		case *dot.EdgeStmt:
			b.edgeStmt(s, b.check(onEdge, s.Attrs), sc)
		case *dot.Subgraph:
			b.walk(s.Stmts, sc.enter(s), false)
		}
	}
}

func attrWhereOf(k dot.AttrStmtKind) attrWhere {
	switch k {
	case dot.NodeAttrs:
		return onNode
	case dot.EdgeAttrs:
		return onEdge
	}
	return onGraph
}

// enter returns the scope of subgraph s: the parent's defaults plus the
// class derived from the subgraph's label, wherever in its body the label
// is written.
func (sc scope) enter(s *dot.Subgraph) scope {
	label := subgraphLabel(s)
	if c := deriveClass(label); c != "" {
		sc.classes = append(sc.classes[:len(sc.classes):len(sc.classes)], c)
	}
	return sc
}

func subgraphLabel(s *dot.Subgraph) string {
	label := ""
	for _, st := range s.Stmts {
		switch x := st.(type) {
		case *dot.AssignStmt:
			if x.Attr.Key == "label" {
				label = x.Attr.Value.Text
			}
		case *dot.AttrStmt:
			if x.Kind == dot.GraphAttrs {
				for _, a := range x.Attrs {
					if a.Key == "label" {
						label = a.Value.Text
					}
				}
			}
		}
	}
	return label
}

// deriveClass turns a subgraph label into a class: lower case, spaces to
// hyphens, anything but [a-z0-9-] dropped ("Loop A" → "loop-a").
func deriveClass(label string) string {
	var sb strings.Builder
	for _, r := range strings.ToLower(label) {
		switch {
		case r == ' ':
			sb.WriteByte('-')
		case r == '-' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9':
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

// withAttrs returns a copy of base with attrs set from src.
func withAttrs(base Attrs, attrs []dot.Attr, src AttrSource) Attrs {
	out := make(Attrs, len(base)+len(attrs))
	maps.Copy(out, base)
	for _, a := range attrs {
		out[a.Key] = Attr{Key: a.Key, Value: a.Value, Source: src, Pos: a.KeyPos}
	}
	return out
}

func (b *builder) graphAttrs(attrs []dot.Attr) {
	for _, a := range attrs {
		b.p.Attrs[a.Key] = Attr{Key: a.Key, Value: a.Value, Source: FromGraph, Pos: a.KeyPos}
	}
}

// declare records a node statement. Defaults in scope apply at the first
// declaration only (as in Graphviz); later statements add or override
// explicit attributes and subgraph classes.
func (b *builder) declare(s *dot.NodeStmt, attrs []dot.Attr, sc scope) {
	n := b.p.byID[s.ID.Name]
	if n == nil {
		n = &Node{ID: s.ID.Name, Pos: s.ID.Pos, Attrs: withAttrs(sc.nodeDefaults, nil, FromDefault)}
		b.p.byID[n.ID] = n
		b.p.Nodes = append(b.p.Nodes, n)
	}
	for _, a := range attrs {
		n.Attrs[a.Key] = Attr{Key: a.Key, Value: a.Value, Source: FromExplicit, Pos: a.KeyPos}
	}
	if len(sc.classes) > 0 {
		b.derived[n] = append(b.derived[n], sc.classes...)
	}
}

// edgeStmt expands a chain into one Edge per hop; the hops share one
// attribute map, which nothing mutates after Load.
func (b *builder) edgeStmt(s *dot.EdgeStmt, written []dot.Attr, sc scope) {
	attrs := withAttrs(sc.edgeDefaults, written, FromExplicit)
	for i := 0; i+1 < len(s.Nodes); i++ {
		from, to := s.Nodes[i], s.Nodes[i+1]
		b.p.Edges = append(b.p.Edges, &Edge{From: from.Name, To: to.Name, Pos: to.Pos, FromPos: from.Pos, Attrs: attrs})
	}
}
