package attractor

import (
	"fmt"
	"strings"
)

// StylesheetError is a model_stylesheet that does not parse. Offset is
// the byte offset in the stylesheet text, so Load can point into the
// attribute value.
type StylesheetError struct {
	Offset int
	Msg    string
	Fix    string
}

func (e *StylesheetError) Error() string { return e.Msg }

// ParseStylesheet parses a model stylesheet: rules `selector { prop:
// value; ... }` where the selector is `*`, a shape name, `.class` or
// `#id` and the properties are llm_model, llm_provider and
// reasoning_effort. Each rule's Offset and each declaration's Offset are
// byte offsets in src. Any error is a *StylesheetError.
func ParseStylesheet(src string) ([]StyleRule, error) {
	sc := &styleScanner{src: src}
	var rules []StyleRule
	for {
		sc.skipSpace()
		if sc.i >= len(src) {
			return rules, nil
		}
		r, err := sc.rule()
		if err != nil {
			return nil, err
		}
		r.Order = len(rules)
		rules = append(rules, r)
	}
}

type styleScanner struct {
	src string
	i   int
}

func (sc *styleScanner) errf(off int, fix, format string, args ...any) error {
	return &StylesheetError{Offset: off, Msg: fmt.Sprintf(format, args...), Fix: fix}
}

// skipSpace skips white space and /* */ comments.
func (sc *styleScanner) skipSpace() {
	for sc.i < len(sc.src) {
		switch {
		case isSpace(sc.src[sc.i]):
			sc.i++
		case strings.HasPrefix(sc.src[sc.i:], "/*"):
			end := strings.Index(sc.src[sc.i+2:], "*/")
			if end < 0 {
				sc.i = len(sc.src)
				return
			}
			sc.i += end + 4
		default:
			return
		}
	}
}

// word reads a run of bytes allowed in selectors and property names.
func (sc *styleScanner) word() string {
	start := sc.i
	for sc.i < len(sc.src) && isWordByte(sc.src[sc.i]) {
		sc.i++
	}
	return sc.src[start:sc.i]
}

func isWordByte(c byte) bool {
	return c == '_' || c == '-' || isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func (sc *styleScanner) rule() (StyleRule, error) {
	r := StyleRule{Offset: sc.i}
	sel, spec, err := sc.selector()
	if err != nil {
		return r, err
	}
	r.Selector, r.Specificity = sel, spec
	sc.skipSpace()
	if sc.i >= len(sc.src) || sc.src[sc.i] != '{' {
		fix := `write one selector per rule, then { property: value; }`
		return r, sc.errf(sc.i, fix, "expected \"{\" after selector %q, found %s", sel, sc.found())
	}
	sc.i++
	r.Decls, err = sc.decls()
	return r, err
}

func (sc *styleScanner) found() string {
	if sc.i >= len(sc.src) {
		return "end of stylesheet"
	}
	return fmt.Sprintf("%q", sc.src[sc.i:sc.i+1])
}

// selector reads `*`, `#id`, `.class` or a shape name and returns it with
// its specificity: 0 universal, 1 shape, 2 class, 3 id.
func (sc *styleScanner) selector() (string, int, error) {
	start := sc.i
	const fix = "selectors are *, a shape like box, .class or #node_id"
	switch sc.src[sc.i] {
	case '*':
		sc.i++
		return "*", 0, nil
	case '#', '.':
		sc.i++
		name := sc.word()
		if name == "" {
			return "", 0, sc.errf(start, fix, "expected a name after %q, found %s", sc.src[start:start+1], sc.found())
		}
		if sc.src[start] == '#' {
			return "#" + name, 3, nil
		}
		return "." + name, 2, nil
	}
	name := sc.word()
	if name == "" {
		return "", 0, sc.errf(start, fix, "expected a selector, found %s", sc.found())
	}
	if _, ok := shapeKind(name); !ok {
		fix := fmt.Sprintf("shape selectors name a shape: %s", strings.Join(knownShapes(), ", "))
		if s := suggest(name, knownShapes()); s != "" {
			fix = fmt.Sprintf("did you mean %q?", s)
		}
		return "", 0, sc.errf(start, fix, "unknown shape %q in stylesheet selector", name)
	}
	return name, 1, nil
}

// decls reads `prop: value; ...}` after the opening brace.
func (sc *styleScanner) decls() ([]StyleDecl, error) {
	var out []StyleDecl
	for {
		sc.skipSpace()
		if sc.i >= len(sc.src) {
			return nil, sc.errf(sc.i, `close the rule with "}"`, "unterminated stylesheet rule: expected \"}\"")
		}
		switch sc.src[sc.i] {
		case '}':
			sc.i++
			return out, nil
		case ';':
			sc.i++
			continue
		}
		d, err := sc.decl()
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
}

func (sc *styleScanner) decl() (StyleDecl, error) {
	start := sc.i
	prop := sc.word()
	alias := ""
	if prop == "model" { // Fabro's name
		alias, prop = prop, "llm_model"
	}
	if !isStyleProperty(prop) {
		if prop == "" {
			return StyleDecl{}, sc.errf(start, "write property: value;", "expected a property name, found %s", sc.found())
		}
		fix := "properties are llm_model, llm_provider and reasoning_effort"
		if s := suggest(prop, styleProperties()); s != "" {
			fix = fmt.Sprintf("did you mean %q?", s)
		}
		return StyleDecl{}, sc.errf(start, fix, "unknown stylesheet property %q", prop)
	}
	sc.skipSpace()
	if sc.i >= len(sc.src) || sc.src[sc.i] != ':' {
		return StyleDecl{}, sc.errf(sc.i, fmt.Sprintf("write %s: VALUE;", prop), "expected \":\" after %q, found %s", prop, sc.found())
	}
	sc.i++
	sc.skipSpace()
	valOff := sc.i
	val, err := sc.value()
	if err != nil {
		return StyleDecl{}, err
	}
	if val == "" {
		return StyleDecl{}, sc.errf(valOff, fmt.Sprintf("write %s: VALUE;", prop), "missing value for %q", prop)
	}
	return StyleDecl{Property: prop, Value: val, Offset: start, Alias: alias}, nil
}

// value reads a quoted string or a bare value running to ; or }.
func (sc *styleScanner) value() (string, error) {
	if sc.i < len(sc.src) && (sc.src[sc.i] == '"' || sc.src[sc.i] == '\'') {
		q := sc.src[sc.i]
		end := strings.IndexByte(sc.src[sc.i+1:], q)
		if end < 0 {
			return "", sc.errf(sc.i, "add the closing quote", "unterminated quoted value in stylesheet")
		}
		v := sc.src[sc.i+1 : sc.i+1+end]
		sc.i += end + 2
		return v, nil
	}
	start := sc.i
	for sc.i < len(sc.src) && !strings.ContainsRune(";}\n{", rune(sc.src[sc.i])) {
		sc.i++
	}
	return strings.TrimSpace(sc.src[start:sc.i]), nil
}

func styleProperties() []string { return []string{"llm_model", "llm_provider", "reasoning_effort"} }

func isStyleProperty(p string) bool {
	return p == "llm_model" || p == "llm_provider" || p == "reasoning_effort"
}

// matches reports whether rule r selects node n.
func (r StyleRule) matches(n *Node) bool {
	switch r.Specificity {
	case 0:
		return true
	case 1:
		return n.Shape == r.Selector
	case 2:
		for _, c := range n.Classes {
			if r.Selector[1:] == c {
				return true
			}
		}
		return false
	}
	return r.Selector[1:] == n.ID
}
