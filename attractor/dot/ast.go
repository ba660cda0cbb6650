// Package dot parses the Attractor dialect of Graphviz DOT.
//
// The dialect is a strict subset of DOT: one `digraph` per file, directed
// edges only, bare identifiers for node IDs, no HTML labels and no `strict`.
// The parser is hand-written so that every graph, node, edge and attribute
// keeps the file, line and column it came from; Attractor diagnostics point
// users at those positions. The package knows nothing of Attractor
// semantics: shapes, handlers and conditions belong to package attractor.
package dot

import "fmt"

// Pos is a position in a source file. Line and Col are 1-based; Col counts
// bytes, as gcc and Go tooling do.
type Pos struct {
	File string
	Line int
	Col  int
}

// IsValid reports whether p was set by the parser.
func (p Pos) IsValid() bool { return p.Line > 0 }

// String formats p as FILE:LINE:COL (FILE omitted when empty).
func (p Pos) String() string {
	if p.File == "" {
		return fmt.Sprintf("%d:%d", p.Line, p.Col)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Graph is a parsed `digraph ID { ... }`.
type Graph struct {
	Pos   Pos    // position of the `digraph` keyword
	ID    string // graph name, may be empty
	IDPos Pos    // position of the name; zero when the graph has none
	Stmts []Stmt
}

// Stmt is one statement of a graph or subgraph body.
type Stmt interface {
	StmtPos() Pos
}

// AttrStmtKind says which defaults an AttrStmt sets.
type AttrStmtKind string

const (
	GraphAttrs AttrStmtKind = "graph"
	NodeAttrs  AttrStmtKind = "node"
	EdgeAttrs  AttrStmtKind = "edge"
)

// AttrStmt is `graph [..]`, `node [..]` or `edge [..]`.
type AttrStmt struct {
	Pos   Pos
	Kind  AttrStmtKind
	Attrs []Attr
}

// AssignStmt is a bare `key = value` in a graph or subgraph body.
type AssignStmt struct {
	Attr Attr
}

// NodeStmt declares a node with optional attributes.
type NodeStmt struct {
	ID    Ident
	Attrs []Attr
}

// EdgeStmt is a (possibly chained) edge statement `a -> b -> c [..]`.
// Nodes has at least two elements; the attributes apply to every hop.
type EdgeStmt struct {
	Nodes []Ident
	Attrs []Attr
}

// Subgraph is `subgraph ID? { ... }` (or an anonymous `{ ... }` block).
type Subgraph struct {
	Pos   Pos
	ID    string
	Stmts []Stmt
}

func (s *AttrStmt) StmtPos() Pos   { return s.Pos }
func (s *AssignStmt) StmtPos() Pos { return s.Attr.KeyPos }
func (s *NodeStmt) StmtPos() Pos   { return s.ID.Pos }
func (s *EdgeStmt) StmtPos() Pos   { return s.Nodes[0].Pos }
func (s *Subgraph) StmtPos() Pos   { return s.Pos }

// Ident is a node identifier with its position.
type Ident struct {
	Name string
	Pos  Pos
}

// Attr is one `key = value` pair. Key may be qualified (`retry.backoff.base`).
type Attr struct {
	Key    string
	KeyPos Pos
	Value  Value
}

// ValueKind says how a value was written. The parser does not interpret
// values beyond this; package attractor types them per attribute.
type ValueKind int

const (
	StringValue   ValueKind = iota // "quoted", escapes decoded into Text
	NumberValue                    // 42, -1, 0.5
	BoolValue                      // true, false
	DurationValue                  // 900s, 15m, 2h, 250ms, 1d (bare)
	BareValue                      // Mdiamond, LR, verify.artifacts
)

func (k ValueKind) String() string {
	switch k {
	case StringValue:
		return "string"
	case NumberValue:
		return "number"
	case BoolValue:
		return "boolean"
	case DurationValue:
		return "duration"
	case BareValue:
		return "bare value"
	}
	return fmt.Sprintf("ValueKind(%d)", int(k))
}

// Value is an attribute value. Text is the decoded text (for strings: the
// content with `\" \\ \n \t` decoded and other escapes kept as written);
// Raw is the exact source text including quotes.
type Value struct {
	Kind ValueKind
	Text string
	Raw  string
	Pos  Pos
}

// Error is a syntax error at a position. Its message reads
// FILE:LINE:COL: message.
type Error struct {
	Pos Pos
	Msg string
}

func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }
