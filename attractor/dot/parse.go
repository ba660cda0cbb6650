package dot

import "strings"

// maxDepth bounds subgraph nesting so that hostile input cannot recurse
// without limit; real pipelines nest a handful of levels.
const maxDepth = 100

// graphSyntax is the shape every file must have, quoted in messages.
const graphSyntax = "`digraph NAME { ... }`"

// Parse parses one Attractor DOT file. file names the source in positions
// and messages. Any error is a *Error; Parse never panics.
//
// Where the dialect leaves room, Parse decides:
//   - Attributes in a list are separated by ",", ";" or whitespace alone
//     (as in Graphviz); a trailing separator is fine.
//   - Bare values are [A-Za-z_][A-Za-z0-9_.:/-]*; a "/" that starts a
//     comment ("//", "/*") ends the value, as does "->". Values starting
//     with a digit, "-" or "." must be numbers or durations.
//   - "#" starts a comment wherever a token may start, not only at the
//     start of a line.
//   - DOT keywords (graph, node, edge, subgraph, digraph, strict) are
//     reserved in any letter case, as Graphviz reads them; they are never
//     node IDs. Graph and subgraph names may be quoted; node IDs may not.
//   - A leading UTF-8 BOM takes no column; CRLF counts as one line break,
//     and CRLF inside a string decodes to "\n".
//   - Subgraphs nest at most 100 deep.
func Parse(file string, src []byte) (*Graph, error) {
	p := &parser{lx: newLexer(file, src)}
	g, err := p.parseFile()
	if err != nil {
		return nil, err
	}
	return g, nil
}

// parser is a recursive-descent parser with one token of lookahead.
type parser struct {
	lx    *lexer
	tok   token
	depth int
}

func (p *parser) next() error {
	tok, err := p.lx.next()
	if err != nil {
		return err
	}
	p.tok = tok
	return nil
}

// expect checks that the current token has kind k and moves past it.
func (p *parser) expect(k tokKind, what, context string) error {
	if p.tok.kind != k {
		return p.unexpected("%q %s", what, context)
	}
	return p.next()
}

// unexpected reports the current token as not what was expected.
func (p *parser) unexpected(format string, args ...any) error {
	return errorf(p.tok.pos, "expected "+format+", found %s", append(args, describe(p.tok))...)
}

func (p *parser) parseFile() (*Graph, error) {
	if err := p.next(); err != nil {
		return nil, err
	}
	if p.tok.kind == tEOF {
		return nil, p.noGraph()
	}
	g, err := p.graph()
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tEOF {
		return nil, p.trailing()
	}
	return g, nil
}

// noGraph explains a file without a single token.
func (p *parser) noGraph() error {
	start := Pos{File: p.lx.file, Line: 1, Col: 1}
	if strings.TrimPrefix(p.lx.src, utf8BOM) == "" {
		return errorf(start, "file is empty: expected %s", graphSyntax)
	}
	return errorf(start, "file has only whitespace and comments: expected %s", graphSyntax)
}

// trailing explains a token after the graph's closing brace.
func (p *parser) trailing() error {
	if p.tok.kind == tIdent && isGraphKeyword(p.tok.raw) || p.tok.kind == tLBrace {
		return errorf(p.tok.pos, "a second graph: a file holds exactly one %s; put each pipeline in its own .dot file", graphSyntax)
	}
	return errorf(p.tok.pos, "unexpected %s after the closing \"}\" of the graph: a file holds exactly one %s", describe(p.tok), graphSyntax)
}

func isGraphKeyword(s string) bool {
	return strings.EqualFold(s, "digraph") || strings.EqualFold(s, "graph") || strings.EqualFold(s, "strict")
}

// graph parses `digraph ID? { stmts }`.
func (p *parser) graph() (*Graph, error) {
	if err := p.graphKeyword(); err != nil {
		return nil, err
	}
	g := &Graph{Pos: p.tok.pos}
	if err := p.next(); err != nil {
		return nil, err
	}
	id, idPos, err := p.optionalID("digraph")
	if err != nil {
		return nil, err
	}
	g.ID, g.IDPos = id, idPos
	g.Stmts, err = p.block("the graph")
	return g, err
}

// graphKeyword checks that the file starts with `digraph` and explains
// the DOT headers the dialect rejects.
func (p *parser) graphKeyword() error {
	t := p.tok
	switch {
	case t.kind == tIdent && t.raw == "digraph":
		return nil
	case t.kind == tIdent && strings.EqualFold(t.raw, "strict"):
		return errorf(t.pos, "`strict` graphs are not supported: remove %q and write %s", t.raw, graphSyntax)
	case t.kind == tIdent && strings.EqualFold(t.raw, "graph"):
		return p.graphHeader(t)
	case t.kind == tIdent && strings.EqualFold(t.raw, "digraph"):
		return errorf(t.pos, "keywords are lower-case here: write \"digraph\" instead of %q", t.raw)
	}
	return errorf(t.pos, "file has no digraph: expected %s, found %s", graphSyntax, describe(t))
}

// graphHeader explains a file that starts with `graph`: either graph
// attributes written outside any digraph (`graph [goal="..."]`, as docs
// show them), or an undirected graph.
func (p *parser) graphHeader(t token) error {
	if err := p.next(); err != nil {
		return err
	}
	if p.tok.kind == tLBrack {
		return errorf(t.pos, "graph attributes outside a digraph: put `%s [...]` inside %s, e.g. digraph pipeline { graph [goal=\"...\"] ... }", t.raw, graphSyntax)
	}
	return errorf(t.pos, "undirected graphs are not supported: write %s instead of %q", graphSyntax, t.raw)
}

// optionalID parses the optional name after `digraph` or `subgraph`: a
// bare identifier or a quoted string. The zero Pos means no name.
func (p *parser) optionalID(after string) (string, Pos, error) {
	t := p.tok
	switch {
	case t.kind == tString, t.kind == tIdent && !isKeyword(t.raw) && !strings.Contains(t.raw, "."):
		return t.text, t.pos, p.next()
	case t.kind == tLBrace:
		return "", Pos{}, nil
	}
	return "", Pos{}, p.unexpected("a name or \"{\" after %q", after)
}

// block parses `{ stmts }`; what names the block in messages.
func (p *parser) block(what string) ([]Stmt, error) {
	open := p.tok.pos
	if err := p.expect(tLBrace, "{", "to open "+what); err != nil {
		return nil, err
	}
	var stmts []Stmt
	for {
		switch p.tok.kind {
		case tRBrace:
			return stmts, p.next()
		case tEOF:
			return nil, errorf(p.tok.pos, "expected \"}\" to close %s opened at %d:%d, found end of file", what, open.Line, open.Col)
		case tSemi:
			if err := p.next(); err != nil {
				return nil, err
			}
			continue
		}
		s, err := p.stmt()
		if err != nil {
			return nil, err
		}
		stmts = append(stmts, s)
	}
}
