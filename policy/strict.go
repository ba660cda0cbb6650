package policy

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// DecodeYAML decodes file, one YAML document, into v (a pointer to a
// struct whose fields carry yaml tags) as strictly as ParseRepoConfig
// reads `.kilroy/config.yml`, with the same messages: YAML syntax; aliases,
// merge keys and duplicates; keys v's type does not declare, with the keys
// known there and a did-you-mean; then the JSON Schema schemaJSON, whose
// $id is schemaID. Problems come back as ConfigErrors with line and
// column. A file without a document leaves v as it was.
//
// The Located it returns places the problems the caller finds in the
// decoded values at the keys they concern.
func DecodeYAML(file string, data []byte, schemaID string, schemaJSON []byte, v any) (*Located, error) {
	doc, err := readDocument(file, data)
	if err != nil || doc == nil {
		return &Located{file: file}, err
	}
	sch, err := newSchema(schemaID, schemaJSON)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", file, err)
	}
	if err := doc.check(reflect.TypeOf(v), sch); err != nil {
		return nil, err
	}
	if err := doc.decode(v); err != nil {
		return nil, err
	}
	return &Located{file: file, doc: doc}, nil
}

// Located is a decoded file that can say where its keys are.
type Located struct {
	file string
	doc  *document // nil for a file without a document
}

// Errorf is a problem with the value at path (mapping keys, outermost
// first), placed at that key or the nearest enclosing one present. The
// message starts with the key path, as every message of this package does.
func (l *Located) Errorf(path []string, format string, args ...any) *ConfigError {
	at := make(keyPath, len(path))
	for i, k := range path {
		at[i] = k
	}
	e := fieldErrorf(at, format, args...)
	if l.doc == nil {
		return &ConfigError{File: l.file, Key: at.String(), Msg: e.msg}
	}
	return l.doc.place(e)
}

// check runs the checks between the syntax and the decoding, stopping at
// the first stage that finds problems: structure, keys of t, the schema.
func (d *document) check(t reflect.Type, sch *configSchema) error {
	if errs := d.convert(); len(errs) > 0 {
		return d.placeAll(errs)
	}
	if errs := checkKeys(d.root, t, nil); len(errs) > 0 {
		return d.placeAll(errs)
	}
	errs, err := sch.check(d.val)
	if err != nil {
		return fmt.Errorf("parse %s: %w", d.file, err)
	}
	if len(errs) > 0 {
		return d.placeAll(errs)
	}
	return nil
}

var yamlTypeErrRE = regexp.MustCompile(`^line (\d+): (.*)$`)

// decode fills v; what the schema let through and a type still refuses
// (a custom UnmarshalText, say) is reported at its line.
func (d *document) decode(v any) error {
	err := d.root.Decode(v)
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		if err != nil {
			return ConfigErrors{{File: d.file, Line: d.root.Line, Col: d.root.Column, Msg: err.Error()}}
		}
		return nil
	}
	var out ConfigErrors
	for _, msg := range te.Errors {
		e := &ConfigError{File: d.file, Line: d.root.Line, Col: d.root.Column, Msg: msg}
		if m := yamlTypeErrRE.FindStringSubmatch(msg); m != nil {
			e.Line, _ = strconv.Atoi(m[1])
			e.Col, e.Msg = 1, m[2]
		}
		out = append(out, e)
	}
	return out
}
