package dot

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// skipSpace skips whitespace and the three comment forms: // and # to the
// end of the line, /* */ blocks. Graphviz honours # only at line start
// (as C preprocessor output); here it starts a comment wherever a token
// could start, which is what people who write # comments expect.
func (l *lexer) skipSpace() error {
	for l.off < len(l.src) {
		switch c := l.src[l.off]; {
		case c == '\n':
			l.advanceTo(l.off + 1)
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			l.off++
		case c == '#' || c == '/' && l.peek(1) == '/':
			l.skipLine()
		case c == '/' && l.peek(1) == '*':
			if err := l.skipBlock(); err != nil {
				return err
			}
		default:
			return nil
		}
	}
	return nil
}

// skipLine stops before the newline so that skipSpace counts it.
func (l *lexer) skipLine() {
	if i := strings.IndexByte(l.src[l.off:], '\n'); i >= 0 {
		l.off += i
		return
	}
	l.off = len(l.src)
}

func (l *lexer) skipBlock() error {
	start := l.pos()
	i := strings.Index(l.src[l.off+2:], "*/")
	if i < 0 {
		return errorf(start, `unterminated block comment: "/*" has no matching "*/"`)
	}
	l.advanceTo(l.off + 2 + i + 2)
	return nil
}

// unknownChar reports the byte at the current offset, which starts no token.
func (l *lexer) unknownChar(start Pos) error {
	r, size := utf8.DecodeRuneInString(l.src[l.off:])
	switch {
	case r == utf8.RuneError && size <= 1:
		return errorf(start, "invalid UTF-8 byte 0x%02x: DOT files must be UTF-8 text", l.src[l.off])
	case r >= utf8.RuneSelf:
		return errorf(start, "unexpected character %q (%U): identifiers are ASCII letters, digits and \"_\"; put other text in a quoted string, e.g. label=\"...\"", r, r)
	case r == '+':
		return errorf(start, `unexpected "+": string concatenation is not supported; write one quoted string`)
	}
	return errorf(start, "unexpected character %s: expected an identifier, a quoted string or one of { } [ ] = ; , ->", quoteByte(byte(r)))
}

// quoteByte shows an ASCII byte readably, control characters escaped.
func quoteByte(c byte) string {
	if c < 0x20 || c == 0x7f {
		return fmt.Sprintf("%q (%U)", rune(c), rune(c))
	}
	return fmt.Sprintf("%q", string(c))
}
