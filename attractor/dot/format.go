package dot

import (
	"bytes"
	"strings"
)

// Format prints g in a canonical layout: one statement per line, tab
// indentation, attributes as `[k=v, k=v]`, strings quoted from their
// decoded Text with only \" \\ \n \t escapes. Two spellings of the same
// graph therefore format the same, and parsing the output gives back g,
// positions and Value.Raw aside. Values are printed from Text, never Raw,
// so graphs built in code need no Raw. Node IDs and keys are printed as
// they are: a graph built in code with invalid ones does not round-trip.
func Format(g *Graph) []byte {
	var b bytes.Buffer
	b.WriteString("digraph ")
	if g.ID != "" {
		b.WriteString(formatID(g.ID))
		b.WriteByte(' ')
	}
	b.WriteString("{\n")
	formatStmts(&b, g.Stmts, 1)
	b.WriteString("}\n")
	return b.Bytes()
}

// String returns Format(g) as a string.
func (g *Graph) String() string { return string(Format(g)) }

func formatStmts(b *bytes.Buffer, stmts []Stmt, depth int) {
	for _, s := range stmts {
		indent := strings.Repeat("\t", depth)
		switch s := s.(type) {
		case *AttrStmt:
			b.WriteString(indent + string(s.Kind) + " ")
			formatAttrList(b, s.Attrs, true)
		case *AssignStmt:
			b.WriteString(indent + s.Attr.Key + " = " + formatValue(s.Attr.Value))
		case *NodeStmt:
			b.WriteString(indent + s.ID.Name)
			formatAttrList(b, s.Attrs, false)
		case *EdgeStmt:
			b.WriteString(indent)
			formatEdge(b, s)
		case *Subgraph:
			formatSubgraph(b, s, depth)
		default:
			continue // nil or foreign statement: nothing faithful to print
		}
		b.WriteByte('\n')
	}
}

func formatEdge(b *bytes.Buffer, s *EdgeStmt) {
	for i, id := range s.Nodes {
		if i > 0 {
			b.WriteString(" -> ")
		}
		b.WriteString(id.Name)
	}
	formatAttrList(b, s.Attrs, false)
}

func formatSubgraph(b *bytes.Buffer, s *Subgraph, depth int) {
	indent := strings.Repeat("\t", depth)
	b.WriteString(indent)
	if s.ID != "" {
		b.WriteString("subgraph " + formatID(s.ID) + " ")
	}
	b.WriteString("{\n")
	formatStmts(b, s.Stmts, depth+1)
	b.WriteString(indent + "}")
}

// formatAttrList writes ` [k=v, ...]`; an empty list is written only
// where the syntax needs one (after graph, node, edge).
func formatAttrList(b *bytes.Buffer, attrs []Attr, always bool) {
	if len(attrs) == 0 && !always {
		return
	}
	if !always {
		b.WriteByte(' ')
	}
	b.WriteByte('[')
	for i, a := range attrs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(a.Key + "=" + formatValue(a.Value))
	}
	b.WriteByte(']')
}

func formatValue(v Value) string {
	if v.Kind == StringValue {
		return quote(v.Text)
	}
	return v.Text
}

// formatID writes a graph or subgraph name bare when it can be read back
// as one, quoted otherwise.
func formatID(id string) string {
	if isIdent(id) && !isKeyword(id) {
		return id
	}
	return quote(id)
}

func isIdent(s string) bool {
	if s == "" || !isIdentStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIdentChar(s[i]) {
			return false
		}
	}
	return true
}
