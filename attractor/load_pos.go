package attractor

import "github.com/kilroy-bot/kilroy-bot/attractor/dot"

// posIn returns the source position of byte off of v's decoded text, so a
// diagnostic about part of a condition or a stylesheet points into the
// attribute value rather than at its start.
func posIn(v dot.Value, off int) dot.Pos {
	c := newPosCursor(v)
	return c.at(off)
}

// posCursor places offsets of one value's decoded text in the source. It
// walks the raw text the way the lexer decoded it: a known escape is two
// raw bytes for one decoded byte, CRLF is two for one, everything else one
// for one. Asked for offsets in increasing order (the rules of a
// stylesheet, the clauses of a condition) it walks the value once, so
// placing every part of a 1 MiB stylesheet costs one pass, not one per part.
type posCursor struct {
	v   dot.Value
	str bool
	n   int     // decoded bytes walked
	i   int     // raw bytes walked
	pos dot.Pos // position of raw byte i
}

func newPosCursor(v dot.Value) *posCursor {
	c := &posCursor{v: v}
	c.reset()
	return c
}

func (c *posCursor) reset() {
	raw := c.v.Raw
	c.str = c.v.Kind == dot.StringValue && len(raw) > 0 && raw[0] == '"'
	c.n, c.i, c.pos = 0, 0, c.v.Pos
	if c.str {
		c.step(1)
	}
}

// step advances over k raw bytes, counting lines and columns.
func (c *posCursor) step(k int) {
	for ; k > 0 && c.i < len(c.v.Raw); k-- {
		if c.v.Raw[c.i] == '\n' {
			c.pos.Line++
			c.pos.Col = 1
		} else {
			c.pos.Col++
		}
		c.i++
	}
}

// at returns the position of decoded byte off; an offset before the last
// one asked for starts the walk over.
func (c *posCursor) at(off int) dot.Pos {
	if off < c.n {
		c.reset()
	}
	raw := c.v.Raw
	for ; c.n < off && c.i < len(raw); c.n++ {
		if c.str && c.i+1 < len(raw) && (raw[c.i] == '\\' && isKnownEscape(raw[c.i+1]) || raw[c.i] == '\r' && raw[c.i+1] == '\n') {
			c.step(1)
		}
		c.step(1)
	}
	return c.pos
}

func isKnownEscape(c byte) bool { return c == '"' || c == '\\' || c == 'n' || c == 't' }

// attrPos returns where the value of key was written, else fallback.
func attrPos(a Attrs, key string, fallback dot.Pos) dot.Pos {
	if v, ok := a[key]; ok && v.Value.Pos.IsValid() {
		return v.Value.Pos
	}
	return fallback
}
