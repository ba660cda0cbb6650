package findings

import "bytes"

// maxDigits bounds line and column numbers: no source file has a billion
// lines, and the bound keeps the conversion from overflowing.
const maxDigits = 9

// cutInt reads a positive decimal number at the start of b.
func cutInt(b []byte) (n int, rest []byte, ok bool) {
	i := 0
	for i < len(b) && i <= maxDigits && b[i] >= '0' && b[i] <= '9' {
		n = n*10 + int(b[i]-'0')
		i++
	}
	if i == 0 || i > maxDigits {
		return 0, b, false
	}
	return n, b[i:], true
}

// cutByte reports whether b starts with c and returns the rest.
func cutByte(b []byte, c byte) ([]byte, bool) {
	if len(b) > 0 && b[0] == c {
		return b[1:], true
	}
	return b, false
}

// trimIndent drops leading blanks and reports whether there were any.
func trimIndent(b []byte) ([]byte, bool) {
	t := bytes.TrimLeft(b, " \t")
	return t, len(t) < len(b)
}

// pos is a position as a tool printed it.
type pos struct{ line, col, endLine int }

// splitColon parses "path:line[:col]:rest" and the GNU forms
// "path:line.col[-endline[.endcol]]:rest" and "path:line-endline:rest". The
// path is the text before the first colon, so it cannot contain one.
func splitColon(l []byte) (raw []byte, ps pos, rest []byte, ok bool) {
	i := bytes.IndexByte(l, ':')
	if i <= 0 {
		return nil, pos{}, nil, false
	}
	raw, rest = l[:i], l[i+1:]
	if ps.line, rest, ok = cutInt(rest); !ok {
		return nil, pos{}, nil, false
	}
	if rest, ok = cutGNURange(rest, &ps); !ok {
		return nil, pos{}, nil, false
	}
	if rest, ok = cutByte(rest, ':'); !ok {
		return nil, pos{}, nil, false
	}
	if len(rest) > 0 && rest[0] >= '0' && rest[0] <= '9' {
		// "path:line:col:" — a number here is a column, never a message.
		if ps.col, rest, ok = cutInt(rest); !ok {
			return nil, pos{}, nil, false
		}
		if rest, ok = cutByte(rest, ':'); !ok {
			return nil, pos{}, nil, false
		}
	}
	return raw, ps, rest, true
}

// cutGNURange reads the optional ".col" and "-endline[.endcol]" after a line.
func cutGNURange(b []byte, ps *pos) ([]byte, bool) {
	ok := true
	if rest, dot := cutByte(b, '.'); dot {
		if ps.col, b, ok = cutInt(rest); !ok {
			return b, false
		}
	}
	if rest, dash := cutByte(b, '-'); dash {
		if ps.endLine, b, ok = cutInt(rest); !ok {
			return b, false
		}
		if rest, dot := cutByte(b, '.'); dot {
			if _, b, ok = cutInt(rest); !ok {
				return b, false
			}
		}
	}
	return b, true
}

// splitLineCol parses exactly "path:line:col", as in a rustc arrow.
func splitLineCol(b []byte) (raw []byte, ps pos, ok bool) {
	j := bytes.LastIndexByte(b, ':')
	if j <= 0 {
		return nil, pos{}, false
	}
	i := bytes.LastIndexByte(b[:j], ':')
	if i <= 0 {
		return nil, pos{}, false
	}
	var rest []byte
	if ps.line, rest, ok = cutInt(b[i+1 : j]); !ok || len(rest) > 0 {
		return nil, pos{}, false
	}
	if ps.col, rest, ok = cutInt(b[j+1:]); !ok || len(rest) > 0 {
		return nil, pos{}, false
	}
	return b[:i], ps, true
}
