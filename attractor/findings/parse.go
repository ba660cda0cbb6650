package findings

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// maxLine is how much of one output line is read; the rest is ignored so a
// minified bundle or a binary dump cannot make a single line expensive.
const maxLine = 8 << 10

// Parse returns the findings in output, deduplicated, in order of first
// appearance (go test log lines appear when their package result line is
// read, since only that line says where their file lives), at most opts.Max
// of them. It returns nil when there are none.
//
// Every finding has a line: a pytest "FAILED path::test" summary takes it
// from the test's traceback when the output has one, and is put on line 1 of
// the file when it does not (--tb=no), since annotations need a line.
func Parse(output []byte, opts Options) []Finding {
	p := newParser(opts)
	for len(output) > 0 && !p.full() {
		var line []byte
		line, output = nextLine(output)
		p.feed(p.clean(line))
	}
	p.finish()
	return p.out
}

// parser holds what one Parse call knows between lines.
type parser struct {
	ws     string // cleaned workspace, "" when unknown
	nodeWS string // cleaned NodeWorkspace, "" when none
	mod    string
	max    int
	out    []Finding
	seen   map[Finding]struct{}
	buf    []byte // the current line without ANSI codes; reused
	rust   rustState
	pytest pytestState
	goTest goTestState
}

func newParser(opts Options) *parser {
	p := &parser{ws: cleanWorkspace(opts.Workspace), nodeWS: cleanWorkspace(opts.NodeWorkspace), mod: opts.GoModule, max: opts.Max}
	if p.max <= 0 {
		p.max = DefaultMax
	}
	p.seen = make(map[Finding]struct{})
	return p
}

func (p *parser) full() bool { return len(p.out) >= p.max }

// feed offers a line to each recogniser, most specific first; the first to
// claim it wins. The stateful ones come first so they see every line.
func (p *parser) feed(l []byte) {
	switch {
	case p.rust.feed(p, l):
	case p.tsc(l):
	case p.pytest.feed(p, l):
	case p.goTest.feed(p, l):
	case p.maven(l):
	case p.kotlin(l):
	default:
		p.colon(l)
	}
}

// finish flushes what was waiting for a line that never came.
func (p *parser) finish() {
	if p.rust.panic.Line > 0 {
		p.emit(p.rust.panic)
	}
	// Output cut short before its package line: the root is the best guess.
	p.goTest.flush(p, "", true)
}

// emit adds f unless it is a duplicate or the cap is reached. f.Path must
// already be confined.
func (p *parser) emit(f Finding) {
	if p.full() || f.Line < 1 || f.Message == "" {
		return
	}
	if f.EndLine < f.Line {
		f.EndLine = 0
	}
	if _, dup := p.seen[f]; dup {
		return
	}
	p.seen[f] = struct{}{}
	p.out = append(p.out, f)
}

// nextLine splits off the first line of b.
func nextLine(b []byte) (line, rest []byte) {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i], b[i+1:]
	}
	return b, nil
}

// clean truncates a line, keeps what a terminal would show after a carriage
// return (progress bars redraw that way) and strips ANSI codes. The result
// may alias p.buf, so recognisers copy what they keep.
func (p *parser) clean(line []byte) []byte {
	if len(line) > maxLine {
		line = line[:maxLine]
	}
	line = bytes.TrimSuffix(line, []byte("\r"))
	if i := bytes.LastIndexByte(line, '\r'); i >= 0 {
		line = line[i+1:]
	}
	if bytes.IndexByte(line, 0x1b) < 0 {
		return line
	}
	p.buf = stripANSI(p.buf[:0], line)
	return p.buf
}

// message turns tool text into a finding's message: trimmed and valid UTF-8,
// since GitHub rejects anything else.
func message(b []byte) string {
	s := string(bytes.TrimSpace(b))
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s
}
