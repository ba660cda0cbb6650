package dot

import "strings"

// tokKind is the kind of a lexical token.
type tokKind int

const (
	tEOF        tokKind = iota
	tIdent              // foo, or a qualified foo.bar.baz
	tString             // "quoted", outside value position (graph IDs, misplaced node IDs)
	tNumber             // a numeral outside value position; only ever an error
	tValue              // any value right after "="; kind in token.vkind
	tLBrace             // {
	tRBrace             // }
	tLBrack             // [
	tRBrack             // ]
	tEq                 // =
	tSemi               // ;
	tComma              // ,
	tColon              // : (ports, rejected)
	tArrow              // ->
	tUndirected         // -- (rejected)
)

// token is one lexical token. raw slices the source, so tokens cost no
// allocation unless a string needs its escapes decoded.
type token struct {
	kind  tokKind
	pos   Pos
	raw   string    // exact source text
	text  string    // decoded text of strings and values
	vkind ValueKind // for tValue
}

// utf8BOM is skipped at file start; editors on Windows like to write it.
const utf8BOM = "\xEF\xBB\xBF"

// lexer turns source text into tokens on demand. It is context-sensitive
// in one way only: the token after "=" is scanned as a value, because bare
// values (verify.artifacts, 900s, a/b) are not identifiers.
type lexer struct {
	file      string
	src       string
	off       int
	line      int
	lineStart int // offset of the first byte of the current line
	afterEq   bool
}

func newLexer(file string, src []byte) *lexer {
	l := &lexer{file: file, src: string(src), line: 1}
	if strings.HasPrefix(l.src, utf8BOM) {
		// The BOM takes no column: the first visible byte is at 1:1.
		l.off, l.lineStart = len(utf8BOM), len(utf8BOM)
	}
	return l
}

func (l *lexer) pos() Pos {
	return Pos{File: l.file, Line: l.line, Col: l.off - l.lineStart + 1}
}

// advanceTo moves to end, counting the newlines it passes. A CR is an
// ordinary byte here: in CRLF files the LF alone ends the line.
func (l *lexer) advanceTo(end int) {
	for {
		i := strings.IndexByte(l.src[l.off:end], '\n')
		if i < 0 {
			break
		}
		l.off += i + 1
		l.line++
		l.lineStart = l.off
	}
	l.off = end
}

// next returns the next token.
func (l *lexer) next() (token, error) {
	if err := l.skipSpace(); err != nil {
		return token{}, err
	}
	afterEq := l.afterEq
	l.afterEq = false
	start := l.pos()
	if l.off >= len(l.src) {
		return token{kind: tEOF, pos: start}, nil
	}
	if afterEq {
		if tok, ok, err := l.value(start); ok || err != nil {
			return tok, err
		}
	}
	return l.token(start)
}

// token scans one token outside value position.
func (l *lexer) token(start Pos) (token, error) {
	c := l.src[l.off]
	if k, ok := punct(c); ok {
		l.afterEq = k == tEq
		return l.emit(k, start, l.off+1), nil
	}
	switch {
	case c == '"':
		return l.str(tString, start)
	case c == '-':
		return l.dash(start)
	case c == '<':
		return token{}, errorf(start, htmlHint)
	case isIdentStart(c):
		return l.emit(tIdent, start, l.scanKey(l.off)), nil
	case isDigit(c) || c == '.' && l.peekDigit(1):
		return l.emit(tNumber, start, l.scanWord(l.off)), nil
	}
	return token{}, l.unknownChar(start)
}

func punct(c byte) (tokKind, bool) {
	switch c {
	case '{':
		return tLBrace, true
	case '}':
		return tRBrace, true
	case '[':
		return tLBrack, true
	case ']':
		return tRBrack, true
	case '=':
		return tEq, true
	case ';':
		return tSemi, true
	case ',':
		return tComma, true
	case ':':
		return tColon, true
	}
	return 0, false
}

// emit makes a token of the source from the current offset to end (which
// never spans a newline) and moves past it.
func (l *lexer) emit(k tokKind, start Pos, end int) token {
	raw := l.src[l.off:end]
	l.off = end
	return token{kind: k, pos: start, raw: raw, text: raw}
}

func (l *lexer) dash(start Pos) (token, error) {
	switch {
	case l.peek(1) == '>':
		return l.emit(tArrow, start, l.off+2), nil
	case l.peek(1) == '-':
		return l.emit(tUndirected, start, l.off+2), nil
	case l.peekDigit(1) || l.peek(1) == '.' && l.peekDigit(2):
		return l.emit(tNumber, start, l.scanWord(l.off+1)), nil
	}
	return token{}, errorf(start, `unexpected "-": edges are written "->"`)
}

// peek returns the byte n past the current offset, or 0 past the end.
func (l *lexer) peek(n int) byte {
	if l.off+n < len(l.src) {
		return l.src[l.off+n]
	}
	return 0
}

func (l *lexer) peekDigit(n int) bool { return isDigit(l.peek(n)) }

// peekKey returns the identifier or key starting at the current offset,
// or "" if none does; messages use it to quote what follows a token.
func (l *lexer) peekKey() string {
	if l.off >= len(l.src) || !isIdentStart(l.src[l.off]) {
		return ""
	}
	return l.src[l.off:l.scanKey(l.off)]
}

// scanKey returns the end of an identifier or qualified key starting at i:
// [A-Za-z_][A-Za-z0-9_]* ( "." [A-Za-z_][A-Za-z0-9_]* )*.
func (l *lexer) scanKey(i int) int {
	for {
		i++
		for i < len(l.src) && isIdentChar(l.src[i]) {
			i++
		}
		if i+1 >= len(l.src) || l.src[i] != '.' || !isIdentStart(l.src[i+1]) {
			return i
		}
	}
}

// scanWord returns the end of a run of identifier characters and dots,
// so that a misplaced numeral like 42abc is reported as one token.
func (l *lexer) scanWord(i int) int {
	for i < len(l.src) && (isIdentChar(l.src[i]) || l.src[i] == '.') {
		i++
	}
	return i
}

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

func isIdentChar(c byte) bool { return isIdentStart(c) || isDigit(c) }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
