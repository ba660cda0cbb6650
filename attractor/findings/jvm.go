package findings

import "bytes"

// maven recognises a compiler diagnostic as Maven prints it, the path
// followed by ":[line,col]" (or ":[line]") and the javac message:
//
//	[ERROR] /home/dev/proj/src/main/java/com/example/App.java:[12,9] cannot find symbol
//	[WARNING] /home/dev/proj/src/main/java/com/example/Old.java:[5,17] [deprecation] Date(int,int,int) in Date has been deprecated
//
// Maven prints each error twice, in its COMPILATION ERROR block and again
// under "Failed to execute goal"; emit keeps the first. The indented
// "symbol:" and "location:" lines after one are context, not findings.
func (p *parser) maven(l []byte) bool {
	var lvl Level
	switch {
	case bytes.HasPrefix(l, []byte("[ERROR] ")):
		lvl, l = LevelError, l[len("[ERROR] "):]
	case bytes.HasPrefix(l, []byte("[WARNING] ")):
		lvl, l = LevelWarning, l[len("[WARNING] "):]
	default:
		return false
	}
	i := bytes.Index(l, []byte(":["))
	if i <= 0 {
		return false
	}
	raw, rest := l[:i], l[i+2:]
	var ps pos
	var ok bool
	if ps.line, rest, ok = cutInt(rest); !ok || ps.line == 0 {
		return false
	}
	if r, comma := cutByte(rest, ','); comma {
		if ps.col, rest, ok = cutInt(r); !ok {
			return false
		}
	}
	if rest, ok = cutByte(rest, ']'); !ok {
		return false
	}
	file, ok := p.confine(raw)
	if !ok {
		return true // a diagnostic, but outside the workspace
	}
	p.emit(Finding{Path: file, Line: ps.line, Column: ps.col, Level: lvl, Message: message(rest), Tool: ToolJava})
	return true
}

// kotlin recognises kotlinc's diagnostics as Gradle and Maven print them,
// the current form with a file URI and the older one:
//
//	e: file:///home/dev/proj/src/main/kotlin/App.kt:12:5 Unresolved reference 'foo'.
//	w: /home/dev/proj/src/main/kotlin/App.kt: (3, 9): Variable 'x' is never used
func (p *parser) kotlin(l []byte) bool {
	var lvl Level
	switch {
	case bytes.HasPrefix(l, []byte("e: ")):
		lvl = LevelError
	case bytes.HasPrefix(l, []byte("w: ")):
		lvl = LevelWarning
	default:
		return false
	}
	l = bytes.TrimPrefix(l[3:], []byte("file://"))
	var (
		raw, rest []byte
		ps        pos
		ok        bool
	)
	if i := bytes.Index(l, []byte(": (")); i > 0 {
		raw, rest = l[:i], l[i+3:]
		if ps.line, rest, ok = cutInt(rest); !ok {
			return false
		}
		if rest, ok = bytes.CutPrefix(rest, []byte(", ")); !ok {
			return false
		}
		if ps.col, rest, ok = cutInt(rest); !ok {
			return false
		}
		if rest, ok = bytes.CutPrefix(rest, []byte("): ")); !ok {
			return false
		}
	} else {
		i := bytes.IndexByte(l, ' ')
		if i <= 0 {
			return false
		}
		if raw, ps, ok = splitLineCol(l[:i]); !ok {
			return false
		}
		rest = l[i+1:]
	}
	if ps.line == 0 || !bytes.HasSuffix(raw, []byte(".kt")) && !bytes.HasSuffix(raw, []byte(".kts")) {
		return false
	}
	file, ok := p.confine(raw)
	if !ok {
		return true
	}
	p.emit(Finding{Path: file, Line: ps.line, Column: ps.col, Level: lvl, Message: message(rest), Tool: ToolKotlin})
	return true
}
