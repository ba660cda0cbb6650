package policy

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ConfigError is one problem in a configuration: where it is (File, Line
// and Col when known, 1-based) and which key (a path such as
// pipelines.ci.on.paths[1]). Msg names the key and says how to fix it.
type ConfigError struct {
	File string
	Line int
	Col  int
	Key  string
	Msg  string
}

func (e *ConfigError) Error() string {
	switch {
	case e.File != "" && e.Line > 0:
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	case e.File != "":
		return e.File + ": " + e.Msg
	default:
		return e.Msg
	}
}

// ConfigErrors is every problem found in one configuration, in file order.
// errors.As finds the first *ConfigError in it.
type ConfigErrors []*ConfigError

func (es ConfigErrors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap lets errors.Is and errors.As look at each problem.
func (es ConfigErrors) Unwrap() []error {
	errs := make([]error, len(es))
	for i, e := range es {
		errs[i] = e
	}
	return errs
}

// sortErrors orders problems by position, then key, so reports are stable.
func sortErrors(es ConfigErrors) {
	slices.SortStableFunc(es, func(a, b *ConfigError) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col), cmp.Compare(a.Key, b.Key))
	})
}

// keyPath is a path into the configuration: strings are mapping keys, ints
// are sequence indexes.
type keyPath []any

func (p keyPath) with(elem any) keyPath {
	return append(slices.Clip(p), elem)
}

// String renders the path as users write it: a.b[2].c.
func (p keyPath) String() string {
	var b strings.Builder
	for _, e := range p {
		switch e := e.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", e)
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			fmt.Fprint(&b, e)
		}
	}
	return b.String()
}

// id is the path as a map key that cannot confuse key "1" with index 1.
func (p keyPath) id() string {
	var b strings.Builder
	for _, e := range p {
		fmt.Fprintf(&b, "%T:%v\x00", e, e)
	}
	return b.String()
}

// fieldError is a problem found on decoded values, before it is placed.
type fieldError struct {
	path keyPath
	msg  string
	node *yaml.Node // where to point, when known better than path
}

func fieldErrorf(path keyPath, format string, args ...any) fieldError {
	return fieldError{path: path, msg: displayPath(path) + ": " + fmt.Sprintf(format, args...)}
}
