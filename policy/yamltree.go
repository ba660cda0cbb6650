package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// document is a parsed configuration file: its YAML tree, the same content
// as plain JSON-like values for the schema, and where every key and item is.
type document struct {
	file string
	root *yaml.Node            // the top-level node (inside the document node)
	val  any                   // map[string]any, []any and scalars
	pos  map[string]*yaml.Node // keyPath.id() -> key node or sequence item
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parseDocument reads exactly one YAML document.
func parseDocument(file string, data []byte) (*document, error) {
	d, err := readDocument(file, data)
	if err == nil && d == nil {
		return nil, ConfigErrors{{File: file, Line: 1, Col: 1, Msg: "the file is empty; start it with version: 1"}}
	}
	return d, err
}

// readDocument reads at most one YAML document; nil, nil for a file that
// holds none (empty, or only comments).
func readDocument(file string, data []byte) (*document, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var top yaml.Node
	err := dec.Decode(&top)
	if errors.Is(err, io.EOF) || (err == nil && len(top.Content) == 0) {
		return nil, nil
	}
	if err != nil {
		return nil, ConfigErrors{yamlSyntaxError(file, err)}
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		return nil, ConfigErrors{{File: file, Line: next.Line, Col: next.Column,
			Msg: "only one YAML document is allowed; remove the second `---` and what follows"}}
	}
	return &document{file: file, root: top.Content[0], pos: map[string]*yaml.Node{}}, nil
}

func yamlSyntaxError(file string, err error) *ConfigError {
	e := &ConfigError{File: file, Msg: "invalid YAML: " + err.Error()}
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Col = 1
		e.Msg = "invalid YAML: " + m[2]
	}
	return e
}

// convert fills d.val and d.pos, reporting what the schema could not see:
// non-scalar keys, merge keys, duplicates and aliases.
func (d *document) convert() []fieldError {
	var errs []fieldError
	d.val = d.value(d.root, nil, &errs)
	return errs
}

func (d *document) value(n *yaml.Node, at keyPath, errs *[]fieldError) any {
	switch n.Kind {
	case yaml.AliasNode:
		// Aliases can nest into cycles and exponential expansions; a
		// configuration this small does not need them.
		*errs = append(*errs, fieldError{node: n, path: at,
			msg: fmt.Sprintf("%s: YAML aliases (*%s) are not supported; write the value out", displayPath(at), n.Value)})
		return nil
	case yaml.MappingNode:
		return d.mapping(n, at, errs)
	case yaml.SequenceNode:
		items := make([]any, len(n.Content))
		for i, item := range n.Content {
			d.pos[at.with(i).id()] = item
			items[i] = d.value(item, at.with(i), errs)
		}
		return items
	}
	return scalar(n)
}

func (d *document) mapping(n *yaml.Node, at keyPath, errs *[]fieldError) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch {
		case k.Kind != yaml.ScalarNode:
			*errs = append(*errs, fieldError{node: k, path: at,
				msg: fmt.Sprintf("%s: keys must be plain names", displayPath(at))})
			continue
		case k.Tag == "!!merge":
			*errs = append(*errs, fieldError{node: k, path: at,
				msg: fmt.Sprintf("%s: YAML merge keys (<<) are not supported; write the keys out", displayPath(at))})
			continue
		}
		p := at.with(k.Value)
		if first, dup := d.pos[p.id()]; dup {
			*errs = append(*errs, fieldError{node: k, path: p,
				msg: fmt.Sprintf("duplicate key %q in %s (first at line %d); keep one", k.Value, displayPath(at), first.Line)})
			continue
		}
		d.pos[p.id()] = k
		m[k.Value] = d.value(v, p, errs)
	}
	return m
}

// scalar turns a YAML scalar into the JSON-like value the schema checks.
func scalar(n *yaml.Node) any {
	switch n.ShortTag() {
	case "!!int", "!!float", "!!bool", "!!null":
		var v any
		if err := n.Decode(&v); err == nil {
			return v
		}
	}
	return n.Value
}

// place gives a field error the position of its key, or of the nearest
// enclosing key that exists.
func (d *document) place(e fieldError) *ConfigError {
	ce := &ConfigError{File: d.file, Key: e.path.String(), Msg: e.msg}
	n := e.node
	for p := e.path; n == nil && len(p) > 0; p = p[:len(p)-1] {
		n = d.pos[p.id()]
	}
	if n == nil {
		n = d.root
	}
	ce.Line, ce.Col = n.Line, n.Column
	return ce
}

func (d *document) placeAll(errs []fieldError) ConfigErrors {
	out := make(ConfigErrors, len(errs))
	for i, e := range errs {
		out[i] = d.place(e)
	}
	sortErrors(out)
	return out
}

// has reports whether the top level has key.
func (d *document) has(key string) bool {
	_, ok := d.pos[keyPath{key}.id()]
	return ok
}

// displayPath names a place for messages: the key path, or "top level".
func displayPath(p keyPath) string {
	if len(p) == 0 {
		return "top level"
	}
	return p.String()
}
