package policy

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/kilroy-bot/kilroy-bot/schema"
)

// configSchema is a compiled schema (of `.kilroy/config.yml`, or of
// another file DecodeYAML reads) with its raw document, from which error
// messages borrow descriptions as hints.
type configSchema struct {
	compiled *jsonschema.Schema
	doc      any
	printer  *message.Printer
}

// newConfigSchema compiles the shipped schema of `.kilroy/config.yml`. It
// is cheap enough to do per file and keeps the package free of global
// state.
func newConfigSchema() (*configSchema, error) {
	return newSchema(schema.ConfigURL, schema.Config())
}

// newSchema compiles the JSON Schema data whose $id is id.
func newSchema(id string, data []byte) (*configSchema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("read schema %s: %w", id, err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(id, doc); err != nil {
		return nil, fmt.Errorf("load schema %s: %w", id, err)
	}
	compiled, err := c.Compile(id)
	if err != nil {
		return nil, fmt.Errorf("compile schema %s: %w", id, err)
	}
	return &configSchema{compiled: compiled, doc: doc, printer: message.NewPrinter(language.English)}, nil
}

// check validates v and turns each failed assertion into a field error at
// the key it concerns.
func (s *configSchema) check(v any) ([]fieldError, error) {
	err := s.compiled.Validate(v)
	var verr *jsonschema.ValidationError
	if err == nil {
		return nil, nil
	} else if !errors.As(err, &verr) {
		return nil, fmt.Errorf("validate against the schema: %w", err)
	}
	var errs []fieldError
	for _, leaf := range leaves(verr) {
		// jsonschema v6.0.3 reuses the instance location slice of a
		// propertyNames failure, so its place is unreliable; the Go checks
		// of the next stage cover every name rule with exact positions.
		if _, ok := leaf.ErrorKind.(*kind.PropertyNames); ok {
			continue
		}
		errs = append(errs, s.explain(leaf, instancePath(v, leaf.InstanceLocation)))
	}
	return errs, nil
}

// leaves flattens the error tree to the assertions that failed. A
// propertyNames failure is kept whole: its causes concern the name alone.
func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if _, ok := e.ErrorKind.(*kind.PropertyNames); ok || len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

// instancePath turns a JSON pointer's tokens into a keyPath, telling
// sequence indexes from keys by walking v.
func instancePath(v any, tokens []string) keyPath {
	var p keyPath
	for _, tok := range tokens {
		switch cur := v.(type) {
		case []any:
			i, _ := strconv.Atoi(tok)
			p = p.with(i)
			if i >= 0 && i < len(cur) {
				v = cur[i]
			}
		case map[string]any:
			p, v = p.with(tok), cur[tok]
		default:
			p = p.with(tok)
		}
	}
	return p
}

// explain writes the message for one failed assertion.
func (s *configSchema) explain(e *jsonschema.ValidationError, at keyPath) fieldError {
	hint := s.description(e.SchemaURL)
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		return fieldError{path: at, msg: fmt.Sprintf("missing key %q %s", k.Missing[0], inPath(at)) + hintSuffix(s.description(e.SchemaURL, "properties", k.Missing[0]))}
	case *kind.AdditionalProperties:
		return fieldError{path: at.with(k.Properties[0]), msg: unknownKeyMsg(k.Properties[0], at, s.propertyNames(e.SchemaURL))}
	case *kind.Const:
		return fieldErrorf(at, "must be %s, got %s%s", showValue(k.Want), showValue(k.Got), hintSuffix(hint))
	case *kind.Enum:
		return fieldErrorf(at, "%s, got %s", k.LocalizedString(s.printer), showValue(k.Got))
	case *kind.Type:
		return fieldErrorf(at, "expected %s, got %s%s", strings.Join(k.Want, " or "), k.Got, hintSuffix(hint))
	case *kind.Pattern:
		return fieldErrorf(at, "%q is not valid%s", k.Got, hintSuffix(hint))
	}
	return fieldErrorf(at, "%s%s", e.ErrorKind.LocalizedString(s.printer), hintSuffix(hint))
}

func hintSuffix(hint string) string {
	if hint == "" {
		return ""
	}
	return " (" + hint + ")"
}

func showValue(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(v)
}

// description returns the description of the schema at schemaURL (then
// down the tokens in more), or "".
func (s *configSchema) description(schemaURL string, more ...string) string {
	if m, ok := s.lookup(schemaURL, more...).(map[string]any); ok {
		d, _ := m["description"].(string)
		return d
	}
	return ""
}

// propertyNames lists the properties the schema at schemaURL declares, in
// lexical order.
func (s *configSchema) propertyNames(schemaURL string) []string {
	m, _ := s.lookup(schemaURL, "properties").(map[string]any)
	return sortedKeys(m)
}

// lookup finds the raw schema at schemaURL's fragment, then down more.
func (s *configSchema) lookup(schemaURL string, more ...string) any {
	u, err := url.Parse(schemaURL)
	if err != nil {
		return nil
	}
	var tokens []string
	if frag := strings.TrimPrefix(u.Fragment, "/"); frag != "" {
		tokens = strings.Split(frag, "/")
	}
	node := s.doc
	for _, tok := range append(tokens, more...) {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		m, ok := node.(map[string]any)
		if !ok {
			return nil
		}
		node = m[tok]
	}
	return node
}
