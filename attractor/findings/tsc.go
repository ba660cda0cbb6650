package findings

import "bytes"

// tsc recognises the TypeScript compiler's two forms:
//
//	src/a.ts(12,5): error TS2322: Type 'string' is not assignable to type 'number'.
//	src/a.ts:12:5 - error TS2322: Type 'string' is not assignable to type 'number'.
//
// The second is the --pretty form, the default on a terminal.
func (p *parser) tsc(l []byte) bool {
	raw, ps, rest, ok := splitTSCParen(l)
	if !ok {
		if raw, ps, rest, ok = splitTSCPretty(l); !ok {
			return false
		}
	}
	lvl, msg, ok := cutTSCDiagnostic(rest)
	if !ok {
		return false
	}
	file, ok := p.confine(raw)
	if !ok {
		return true
	}
	p.emit(Finding{Path: file, Line: ps.line, Column: ps.col, Level: lvl, Message: msg, Tool: ToolTSC})
	return true
}

// splitTSCParen parses "path(line,col): rest".
func splitTSCParen(l []byte) (raw []byte, ps pos, rest []byte, ok bool) {
	i := bytes.IndexByte(l, '(')
	if i <= 0 {
		return nil, pos{}, nil, false
	}
	raw, rest = l[:i], l[i+1:]
	if ps.line, rest, ok = cutInt(rest); !ok {
		return nil, pos{}, nil, false
	}
	if rest, ok = cutByte(rest, ','); !ok {
		return nil, pos{}, nil, false
	}
	if ps.col, rest, ok = cutInt(rest); !ok {
		return nil, pos{}, nil, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte("): ")); !ok {
		return nil, pos{}, nil, false
	}
	return raw, ps, rest, true
}

// splitTSCPretty parses "path:line:col - rest".
func splitTSCPretty(l []byte) (raw []byte, ps pos, rest []byte, ok bool) {
	i := bytes.Index(l, []byte(" - "))
	if i <= 0 {
		return nil, pos{}, nil, false
	}
	if raw, ps, ok = splitLineCol(l[:i]); !ok {
		return nil, pos{}, nil, false
	}
	return raw, ps, l[i+3:], true
}

// cutTSCDiagnostic parses "error TS2322: message" into a level and
// "TS2322: message".
func cutTSCDiagnostic(b []byte) (Level, string, bool) {
	word, rest, ok := bytes.Cut(b, []byte(" TS"))
	if !ok {
		return "", "", false
	}
	lvl, ok := lookupLevel(word)
	if !ok {
		return "", "", false
	}
	n, after, ok := cutInt(rest)
	if !ok || n == 0 {
		return "", "", false
	}
	code := rest[:len(rest)-len(after)]
	msg, ok := bytes.CutPrefix(after, []byte(": "))
	if !ok {
		return "", "", false
	}
	m := message(msg)
	if m == "" {
		return "", "", false
	}
	return lvl, "TS" + string(code) + ": " + m, true
}
