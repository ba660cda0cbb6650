package dot

import "strings"

// str scans a quoted string starting at the current offset. Strings may
// span lines; an unterminated one is reported at its opening quote, which
// is where the user has to look.
func (l *lexer) str(k tokKind, start Pos) (token, error) {
	i := l.off + 1
	for i < len(l.src) && l.src[i] != '"' {
		if l.src[i] == '\\' {
			i++ // the escaped byte cannot close the string
		}
		i++
	}
	if i >= len(l.src) {
		return token{}, errorf(start, `unterminated string: no closing quote (") before end of file`)
	}
	raw := l.src[l.off : i+1]
	l.advanceTo(i + 1)
	return token{kind: k, pos: start, raw: raw, text: unquote(raw[1 : len(raw)-1]), vkind: StringValue}, nil
}

// unquote decodes \" \\ \n \t and keeps every other backslash sequence as
// written, so regexes and Windows paths in prompts survive. CRLF becomes
// LF so that a Windows checkout does not change multi-line prompts.
func unquote(s string) string {
	if !strings.ContainsAny(s, "\\\r") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			if d, ok := escape(s[i+1]); ok {
				b.WriteByte(d)
				i++
				continue
			}
		case c == '\r' && i+1 < len(s) && s[i+1] == '\n':
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func escape(c byte) (byte, bool) {
	switch c {
	case '"', '\\':
		return c, true
	case 'n':
		return '\n', true
	case 't':
		return '\t', true
	}
	return 0, false
}

// quote is the inverse of unquote: quote(s) decodes back to s.
func quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
