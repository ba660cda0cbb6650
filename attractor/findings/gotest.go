package findings

import (
	"bytes"
	"path"
	"slices"
	"strings"
)

// goTestState places go test log lines. go test prints a failing test's log
// lines indented and names only the file:
//
//	--- FAIL: TestAdd (0.00s)
//	    add_test.go:12: Add(1, 2) = 4, want 3
//	FAIL
//	FAIL	example.com/calc/internal/add	0.002s
//
// so the lines wait for the package line that closes the package's output,
// which says the directory (given Options.GoModule). With -v, passing tests
// log too; their lines are dropped when "--- PASS" or an "ok" package line
// arrives.
type goTestState struct {
	test    string // the test running now, from "=== RUN/CONT/NAME" lines
	pending []pendingLog
}

type pendingLog struct {
	f    Finding // Path is the bare file name when bare is set
	bare bool
	test string
}

func (g *goTestState) feed(p *parser, l []byte) bool {
	if verb, name, ok := cutTestMarker(l); ok {
		if verb != "PAUSE" {
			g.test = name
		}
		return true
	}
	t, indented := trimIndent(l)
	if name, ok := cutTestResult(t); ok {
		g.drop(name)
		return true
	}
	if !indented {
		return g.packageLine(p, l)
	}
	return g.logLine(p, t)
}

// cutTestMarker parses "=== RUN   TestX/sub" and its CONT, NAME, PAUSE kin.
func cutTestMarker(l []byte) (verb, name string, ok bool) {
	rest, ok := bytes.CutPrefix(l, []byte("=== "))
	if !ok {
		return "", "", false
	}
	v, n, _ := bytes.Cut(rest, []byte(" "))
	switch string(v) {
	case "RUN", "CONT", "NAME", "PAUSE":
		return string(v), string(bytes.TrimSpace(n)), true
	}
	return "", "", false
}

// cutTestResult parses "--- PASS: TestX (0.00s)" and "--- SKIP: ...", the
// results that make a test's log lines noise.
func cutTestResult(t []byte) (string, bool) {
	rest, ok := bytes.CutPrefix(t, []byte("--- PASS: "))
	if !ok {
		if rest, ok = bytes.CutPrefix(t, []byte("--- SKIP: ")); !ok {
			return "", false
		}
	}
	name, _, _ := bytes.Cut(rest, []byte(" ("))
	return string(name), true
}

// drop forgets the log lines of a passed or skipped test and its subtests.
func (g *goTestState) drop(name string) {
	g.pending = slices.DeleteFunc(g.pending, func(pl pendingLog) bool {
		return pl.test == name || strings.HasPrefix(pl.test, name+"/")
	})
}

// packageLine handles "ok  \tpkg\t0.1s", "?   \tpkg\t[no test files]" and
// "FAIL\tpkg\t0.1s" (or "FAIL\tpkg [build failed]").
func (g *goTestState) packageLine(p *parser, l []byte) bool {
	for _, prefix := range []string{"ok  \t", "?   \t"} {
		if bytes.HasPrefix(l, []byte(prefix)) {
			g.pending = g.pending[:0] // the package passed: every line was a log
			return true
		}
	}
	rest, ok := bytes.CutPrefix(l, []byte("FAIL\t"))
	if !ok {
		return false
	}
	pkg := rest
	if i := bytes.IndexAny(pkg, " \t"); i >= 0 {
		pkg = pkg[:i]
	}
	dir, ok := p.goPackageDir(string(pkg))
	g.flush(p, dir, ok)
	return true
}

// goPackageDir maps an import path to its directory in the workspace. With
// no module known, every package is taken to be at the root.
func (p *parser) goPackageDir(pkg string) (string, bool) {
	switch {
	case p.mod == "" || pkg == p.mod:
		return "", true
	case strings.HasPrefix(pkg, p.mod+"/"):
		return pkg[len(p.mod)+1:], true
	}
	return "", false
}

// flush emits the waiting lines with bare file names placed in dir; when the
// directory is unknown (a package of another module) they are dropped.
func (g *goTestState) flush(p *parser, dir string, known bool) {
	for _, pl := range g.pending {
		if pl.bare {
			if !known {
				continue
			}
			file, ok := p.confine([]byte(path.Join(dir, pl.f.Path)))
			if !ok {
				continue
			}
			pl.f.Path = file
		}
		p.emit(pl.f)
	}
	g.pending = g.pending[:0]
}

// logLine parses an indented "file_test.go:12: message".
func (g *goTestState) logLine(p *parser, t []byte) bool {
	raw, ps, rest, ok := splitColon(t)
	if !ok || !bytes.HasSuffix(raw, []byte(".go")) {
		return false
	}
	pl := pendingLog{test: g.test, bare: bytes.IndexByte(raw, '/') < 0}
	pl.f = Finding{Line: ps.line, Column: ps.col, Level: LevelError, Message: message(rest), Tool: ToolGoTest}
	if pl.bare {
		if !plausiblePath(raw) {
			return false
		}
		pl.f.Path = string(raw)
	} else if pl.f.Path, ok = p.confine(raw); !ok { // go test -fullpath
		return true
	}
	if pl.f.Message != "" && ps.line > 0 && len(g.pending) < p.max {
		g.pending = append(g.pending, pl)
	}
	return true
}
