package findings

import "bytes"

// rustState carries a rustc diagnostic across lines. rustc prints the level
// and message on one line and the position on the next:
//
//	error[E0308]: mismatched types
//	 --> src/main.rs:4:18
//
// and a panicking test prints the position first and the message next:
//
//	thread 'tests::add' panicked at src/lib.rs:12:9:
//	assertion `left == right` failed
type rustState struct {
	header Finding // level and message awaiting an arrow; Message "" when none
	panic  Finding // position awaiting a message; Line 0 when none
}

func (r *rustState) feed(p *parser, l []byte) bool {
	header, panicAt := r.header, r.panic
	r.header, r.panic = Finding{}, Finding{}
	switch {
	case header.Message != "":
		// Only the line right after a header may locate it; later arrows
		// belong to notes about other places.
		if raw, ps, ok := cutArrow(l); ok {
			if file, ok := p.confine(raw); ok {
				header.Path, header.Line, header.Column = file, ps.line, ps.col
				p.emit(header)
			}
			return true
		}
	case panicAt.Line > 0:
		if m := message(l); m != "" {
			panicAt.Message += ": " + m
		}
		p.emit(panicAt)
		return true
	}
	if f, ok := rustHeader(l); ok {
		r.header = f
		return true
	}
	return r.panicked(p, l)
}

// rustHeader parses "error[E0308]: msg" or "warning: msg" at the start of a
// line.
func rustHeader(l []byte) (Finding, bool) {
	f := Finding{Tool: ToolRustc}
	rest, ok := bytes.CutPrefix(l, []byte("error"))
	f.Level = LevelError
	if !ok {
		if rest, ok = bytes.CutPrefix(l, []byte("warning")); !ok {
			return Finding{}, false
		}
		f.Level = LevelWarning
	}
	var code []byte
	if rest, ok = cutByte(rest, '['); ok {
		i := bytes.IndexByte(rest, ']')
		if i <= 0 {
			return Finding{}, false
		}
		code, rest = rest[:i], rest[i+1:]
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(": ")); !ok {
		return Finding{}, false
	}
	f.Message = withCode(code, rest)
	return f, f.Message != ""
}

// cutArrow parses rustc's " --> path:line:col" location line.
func cutArrow(l []byte) ([]byte, pos, bool) {
	rest, ok := bytes.CutPrefix(bytes.TrimLeft(l, " "), []byte("--> "))
	if !ok {
		return nil, pos{}, false
	}
	return splitLineCol(bytes.TrimSpace(rest))
}

// panicked recognises both panic formats: "thread 'x' panicked at
// path:line:col:" (Rust 1.73 on, message on the next line) and the older
// "thread 'x' panicked at 'message', path:line:col".
func (r *rustState) panicked(p *parser, l []byte) bool {
	rest, ok := bytes.CutPrefix(l, []byte("thread '"))
	if !ok {
		return false
	}
	name, rest, ok := bytes.Cut(rest, []byte("' panicked at "))
	if !ok {
		return false
	}
	f := Finding{Level: LevelError, Tool: ToolRustPanic, Message: "thread '" + message(name) + "' panicked"}
	loc, wait := rest, false
	if q, quoted := cutByte(rest, '\''); quoted {
		i := bytes.LastIndex(q, []byte("', "))
		if i < 0 {
			return false
		}
		f.Message += ": " + message(q[:i])
		loc = q[i+3:]
	} else if loc, wait = bytes.CutSuffix(rest, []byte(":")); !wait {
		return false
	}
	raw, ps, ok := splitLineCol(loc)
	if !ok {
		return false
	}
	if f.Path, ok = p.confine(raw); !ok {
		return true
	}
	f.Line, f.Column = ps.line, ps.col
	if wait {
		r.panic = f
	} else {
		p.emit(f)
	}
	return true
}
