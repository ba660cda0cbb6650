package findings

import (
	"bytes"
	"path"
)

// cFamily lists the extensions gcc and clang report on.
var cFamily = []string{
	".c", ".h", ".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++",
	".m", ".mm", ".ipp", ".tcc", ".inl", ".cu", ".cuh",
}

// colon recognises "path:line[:col]: [level:] message", the form shared by
// the Go tools, gcc/clang, eslint's unix format, mypy, flake8 and most
// others. Only unindented lines count: indented ones are source excerpts and
// context in every tool that uses this form.
func (p *parser) colon(l []byte) bool {
	tool := ""
	if rest, ok := bytes.CutPrefix(l, []byte("vet: ")); ok {
		l, tool = rest, ToolGo // go test runs vet and prefixes its findings
	}
	raw, ps, rest, ok := splitColon(l)
	if !ok {
		return false
	}
	file, ok := p.confine(raw)
	if !ok {
		return false
	}
	f := Finding{Path: file, Line: ps.line, Column: ps.col, EndLine: ps.endLine, Level: LevelError}
	lvl, code, body, hasLevel := cutLevel(rest)
	if hasLevel {
		f.Level, rest = lvl, body
	}
	var rule []byte
	if lvl, body, r, ok := cutESLintSuffix(rest); ok {
		f.Level, rest, rule, tool = lvl, body, r, ToolESLint
	}
	f.Tool = colonTool(tool, file)
	if f.Tool == ToolGCC && !hasLevel {
		// gcc's unlabelled lines ("required from here", "in expansion of
		// macro") locate an error reported elsewhere.
		f.Level = LevelNotice
	}
	f.Message = withCode(code, rest)
	if len(rule) > 0 && f.Message != "" {
		f.Message += " (" + message(rule) + ")"
	}
	p.emit(f)
	return true
}

// colonTool names the family a colon-form finding belongs to, by the tool
// already known or else by the file's extension.
func colonTool(known, file string) string {
	if known != "" {
		return known
	}
	switch ext := path.Ext(file); ext {
	case ".go":
		return ToolGo
	case ".rs":
		return ToolRustc // rustc --error-format=short
	default:
		for _, e := range cFamily {
			if ext == e {
				return ToolGCC
			}
		}
	}
	return ToolGeneric
}

// withCode puts a diagnostic code in front of the message, as tsc prints it
// ("TS2322: Type ..."), so every family reads alike.
func withCode(code, msg []byte) string {
	if len(code) == 0 {
		return message(msg)
	}
	m := message(msg)
	if m == "" {
		return ""
	}
	return message(code) + ": " + m
}

// cutESLintSuffix splits eslint's unix format trailer "[Error/rule]",
// "[Warning/rule]" or "[Error]" (parse errors have no rule) off a message.
func cutESLintSuffix(msg []byte) (lvl Level, rest, rule []byte, ok bool) {
	msg = bytes.TrimRight(msg, " \t")
	if len(msg) == 0 || msg[len(msg)-1] != ']' {
		return "", msg, nil, false
	}
	i := bytes.LastIndex(msg, []byte(" ["))
	if i < 0 {
		return "", msg, nil, false
	}
	inner := msg[i+2 : len(msg)-1]
	sev, rule, _ := bytes.Cut(inner, []byte("/"))
	switch string(sev) {
	case "Error":
		lvl = LevelError
	case "Warning":
		lvl = LevelWarning
	default:
		return "", msg, nil, false
	}
	return lvl, msg[:i], rule, true
}
