package findings

import (
	"bytes"
	"path"
	"strings"
	"unicode/utf8"
)

// maxPath bounds what is taken for a path; longer tokens are not file names
// any tool prints.
const maxPath = 1024

// extensionless lists file names without an extension that tools report
// positions in; any other name needs an extension or a directory to count as
// a path, which is what tells "main.go:3:" from "12:30:45:" or "localhost:80:".
var extensionless = []string{
	"Makefile", "makefile", "GNUmakefile", "Dockerfile", "Containerfile",
	"Jenkinsfile", "Vagrantfile", "Gemfile", "Rakefile", "Justfile", "justfile",
}

func cleanWorkspace(ws string) string {
	if ws == "" {
		return ""
	}
	return path.Clean(ws)
}

// confine returns raw as a clean path relative to the workspace, or false if
// it does not look like a file or lies outside the workspace.
func (p *parser) confine(raw []byte) (string, bool) {
	if !plausiblePath(raw) {
		return "", false
	}
	s := path.Clean(string(raw))
	if path.IsAbs(s) {
		rel, ok := underWorkspace(s, p.ws)
		if !ok {
			rel, ok = underWorkspace(s, p.nodeWS)
		}
		if !ok {
			return "", false
		}
		s = rel
	}
	if s == "." || s == ".." || strings.HasPrefix(s, "../") || s[0] == '~' {
		return "", false
	}
	return s, true
}

// underWorkspace makes an absolute path relative to the workspace.
func underWorkspace(abs, ws string) (string, bool) {
	switch {
	case ws == "" || !path.IsAbs(ws):
		return "", false
	case ws == "/":
		return abs[1:], len(abs) > 1
	case strings.HasPrefix(abs, ws) && len(abs) > len(ws)+1 && abs[len(ws)] == '/':
		return abs[len(ws)+1:], true
	}
	return "", false
}

// plausiblePath rejects tokens that cannot be a file a tool reports on:
// blanks, control bytes, URLs, invalid UTF-8, and names with neither a
// directory nor an extension (unless well known).
func plausiblePath(raw []byte) bool {
	if len(raw) == 0 || len(raw) > maxPath || !utf8.Valid(raw) || bytes.Contains(raw, []byte("://")) {
		return false
	}
	for _, c := range raw {
		if c <= ' ' || c == 0x7f {
			return false
		}
	}
	if bytes.IndexByte(raw, '/') >= 0 {
		return true
	}
	return hasExtension(raw) || isExtensionless(raw)
}

// hasExtension wants a dot followed by a word with a letter in it, so version
// numbers and addresses ("10.0.0.1:8080: refused") are not files.
func hasExtension(name []byte) bool {
	i := bytes.LastIndexByte(name, '.')
	if i < 0 || i == len(name)-1 {
		return false
	}
	letter := false
	for _, c := range name[i+1:] {
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letter = true
		case c >= '0' && c <= '9' || c == '_' || c == '-' || c == '+':
		default:
			return false
		}
	}
	return letter
}

func isExtensionless(name []byte) bool {
	for _, n := range extensionless {
		if string(name) == n {
			return true
		}
	}
	return false
}
