package agent

import "bytes"

// lineBuffer splits a stream written in pieces into lines, keeping at
// most max bytes of each (the head of a line, where a CLI's event says
// what it is).
type lineBuffer struct {
	line []byte // the start of the unfinished line so far
	max  int
}

// feed adds p and calls each for every line it completes, without its
// newline; the slice is valid only during the call.
func (b *lineBuffer) feed(p []byte, each func(line []byte)) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		part := p
		if i >= 0 {
			part = p[:i]
		}
		if room := b.max - len(b.line); room > 0 {
			b.line = append(b.line, part[:min(len(part), room)]...)
		}
		if i < 0 {
			return
		}
		each(b.line)
		b.line, p = b.line[:0], p[i+1:]
	}
}
