package attractor

import "github.com/kilroy-bot/kilroy-bot/attractor/dot"

// posIn returns the source position of byte off of v's decoded text, so a
// diagnostic about part of a condition or a stylesheet points into the
// attribute value rather than at its start. It walks the raw text the way
// the lexer decoded it: a known escape is two raw bytes for one decoded
// byte, CRLF is two for one, everything else one for one.
func posIn(v dot.Value, off int) dot.Pos {
	raw, i := v.Raw, 0
	str := v.Kind == dot.StringValue && len(raw) > 0 && raw[0] == '"'
	if str {
		i = 1
	}
	for n := 0; n < off && i < len(raw); n++ {
		if str && i+1 < len(raw) && (raw[i] == '\\' && isKnownEscape(raw[i+1]) || raw[i] == '\r' && raw[i+1] == '\n') {
			i++
		}
		i++
	}
	p := v.Pos
	for j := 0; j < i; j++ {
		if raw[j] == '\n' {
			p.Line++
			p.Col = 1
		} else {
			p.Col++
		}
	}
	return p
}

func isKnownEscape(c byte) bool { return c == '"' || c == '\\' || c == 'n' || c == 't' }

// attrPos returns where the value of key was written, else fallback.
func attrPos(a Attrs, key string, fallback dot.Pos) dot.Pos {
	if v, ok := a[key]; ok && v.Value.Pos.IsValid() {
		return v.Value.Pos
	}
	return fallback
}
