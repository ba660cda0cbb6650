package findings

import (
	"bytes"
	"strings"
)

// maxPytestTests bounds how many test positions a run remembers while waiting
// for the short summary that names the failed tests.
const maxPytestTests = 4096

// pytestState follows pytest's failure report:
//
//	_________________________________ test_add _________________________________
//
//	    def test_add():
//	>       assert add(1, 1) == 3
//	E       assert 2 == 3
//
//	tests/test_calc.py:12: AssertionError
//	...
//	FAILED tests/test_calc.py::test_add - assert 2 == 3
//
// A location line naming an exception is a finding at once. The summary line
// names no line, so the position comes from the failed test's traceback: the
// first entry under its section header ("tests/test_calc.py:12: in test_add"
// with --tb=short). A summary whose test left no traceback (--tb=no) is put on
// line 1 of its file.
type pytestState struct {
	block   string // the section (test) whose traceback is being read
	errLine string // the first "E" line since the last location line
	lines   map[testKey]int
	located map[fileLine]struct{} // positions of reported exceptions
}

type testKey struct{ path, name string }

type fileLine struct {
	path string
	line int
}

func (s *pytestState) feed(p *parser, l []byte) bool {
	if name, ok := cutPytestHeader(l); ok {
		s.block, s.errLine = name, ""
		return true
	}
	if e, ok := bytes.CutPrefix(l, []byte("E ")); ok && s.block != "" {
		if s.errLine == "" {
			s.errLine = message(e)
		}
		return true
	}
	return s.summary(p, l) || s.location(p, l)
}

// cutPytestHeader parses "____ test_name ____", also the "ERROR at setup of
// test_name" and "ERROR collecting path" forms. The "_ _ _ _" rule between
// traceback entries is not a header.
func cutPytestHeader(l []byte) (string, bool) {
	if !bytes.HasPrefix(l, []byte("___")) || !bytes.HasSuffix(l, []byte("___")) {
		return "", false
	}
	name := bytes.TrimSpace(bytes.Trim(l, "_"))
	if len(name) == 0 || len(bytes.Trim(name, "_ ")) == 0 || len(name)+2 > len(l) {
		return "", false
	}
	for _, prefix := range []string{"ERROR at setup of ", "ERROR at teardown of ", "ERROR collecting "} {
		if rest, ok := bytes.CutPrefix(name, []byte(prefix)); ok {
			name = rest
			break
		}
	}
	return string(name), true
}

// location handles "path.py:12: AssertionError", "path.py:12: in test_add"
// and the bare "path.py:12:" of an intermediate traceback entry.
func (s *pytestState) location(p *parser, l []byte) bool {
	raw, ps, rest, ok := splitColon(l)
	if !ok {
		raw, ps, ok = splitFixtureLocation(l)
	}
	if !ok || ps.col != 0 || ps.endLine != 0 || !bytes.HasSuffix(raw, []byte(".py")) {
		return false
	}
	rest = bytes.TrimSpace(rest)
	fn, isIn := bytes.CutPrefix(rest, []byte("in "))
	if !isIn && len(rest) > 0 && !isExceptionName(rest) {
		return false // "path.py:3: error: ..." is mypy's, for the colon form
	}
	file, ok := p.confine(raw)
	if !ok {
		return true
	}
	s.remember(testKey{file, s.block}, ps.line)
	if isIn {
		s.remember(testKey{file, "in " + string(fn)}, ps.line)
	}
	errLine := s.errLine
	s.errLine = ""
	if isIn || len(rest) == 0 {
		return true
	}
	p.emit(Finding{Path: file, Line: ps.line, Level: LevelError, Message: exceptionMessage(string(rest), errLine), Tool: ToolPytest})
	s.markLocated(file, ps.line)
	return true
}

// splitFixtureLocation parses the "path.py:8" that closes a missing-fixture
// error, with no colon after the line.
func splitFixtureLocation(l []byte) ([]byte, pos, bool) {
	i := bytes.LastIndexByte(l, ':')
	if i <= 0 {
		return nil, pos{}, false
	}
	n, rest, ok := cutInt(l[i+1:])
	if !ok || len(rest) > 0 {
		return nil, pos{}, false
	}
	return l[:i], pos{line: n}, true
}

// remember keeps the first position seen for a key: the traceback's entry
// into the test, not a helper it called.
func (s *pytestState) remember(k testKey, line int) {
	if s.lines == nil {
		s.lines = make(map[testKey]int)
	}
	if _, ok := s.lines[k]; !ok && len(s.lines) < maxPytestTests {
		s.lines[k] = line
	}
}

func (s *pytestState) markLocated(file string, line int) {
	if s.located == nil {
		s.located = make(map[fileLine]struct{})
	}
	s.located[fileLine{file, line}] = struct{}{}
}

// summary handles "FAILED path::Class::test - reason" and "ERROR path - reason".
func (s *pytestState) summary(p *parser, l []byte) bool {
	failed := true
	rest, ok := bytes.CutPrefix(l, []byte("FAILED "))
	if !ok {
		if rest, ok = bytes.CutPrefix(l, []byte("ERROR ")); !ok {
			return false
		}
		failed = false
	}
	id, reason, _ := bytes.Cut(rest, []byte(" - "))
	raw, names, hasNames := bytes.Cut(bytes.TrimSpace(id), []byte("::"))
	file, ok := p.confine(raw)
	if !ok {
		return false
	}
	name := string(raw)
	if n := message(names); hasNames && n != "" {
		name = n
	}
	line := s.testLine(file, name)
	if _, dup := s.located[fileLine{file, line}]; dup {
		return true // the exception's own finding already says it
	}
	msg := "error in " + name
	if failed {
		msg = name + " failed"
	}
	if r := message(reason); r != "" {
		msg += ": " + r
	}
	p.emit(Finding{Path: file, Line: line, Level: LevelError, Message: msg, Tool: ToolPytest})
	return true
}

// testLine finds where a failed test's traceback entered its file: by its
// section header ("TestCalc.test_add[1-2]"), else by the function name of a
// "in test_add" entry, else line 1.
func (s *pytestState) testLine(file, id string) int {
	if n, ok := s.lines[testKey{file, strings.ReplaceAll(id, "::", ".")}]; ok {
		return n
	}
	fn := id
	if i := strings.LastIndex(id, "::"); i >= 0 {
		fn = id[i+2:]
	}
	if i := strings.IndexByte(fn, '['); i >= 0 {
		fn = fn[:i]
	}
	if n, ok := s.lines[testKey{file, "in " + fn}]; ok {
		return n
	}
	return 1
}

// isExceptionName accepts "AssertionError", "Failed", "mod.CustomError":
// dotted identifiers whose last part is capitalised.
func isExceptionName(b []byte) bool {
	last := b[bytes.LastIndexByte(b, '.')+1:]
	if len(last) == 0 || last[0] < 'A' || last[0] > 'Z' {
		return false
	}
	for _, c := range b {
		if !(c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// exceptionMessage joins the exception name and its "E" line, without
// repeating the name when the line already starts with it.
func exceptionMessage(exc, errLine string) string {
	switch {
	case errLine == "":
		return exc
	case strings.HasPrefix(errLine, exc):
		return errLine
	}
	return exc + ": " + errLine
}
