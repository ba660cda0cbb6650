// Package schematest keeps a shipped JSON Schema and the Go type its file
// is strictly decoded into in step: every object in the schema must
// declare exactly the keys (yaml tags) of the type at that place, so the
// editor and the bot accept the same files.
package schematest

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// MatchesType fails t where schemaJSON and typ disagree about keys.
func MatchesType(t testing.TB, schemaJSON []byte, typ reflect.Type) {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(schemaJSON, &doc); err != nil {
		t.Fatal(err)
	}
	compare(t, doc, doc, typ, "$")
}

func compare(t testing.TB, doc, node map[string]any, typ reflect.Type, at string) {
	t.Helper()
	node = deref(t, doc, node)
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	props, _ := node["properties"].(map[string]any)
	switch typ.Kind() {
	case reflect.Struct:
		keys := yamlKeys(typ)
		if diff := cmp.Diff(slices.Sorted(mapKeys(props)), slices.Sorted(slices.Values(keys))); diff != "" {
			t.Errorf("%s: schema properties (-schema +Go type %s):\n%s", at, typ, diff)
		}
		for _, key := range keys {
			if sub, ok := props[key].(map[string]any); ok {
				compare(t, doc, sub, fieldByKey(typ, key), at+"."+key)
			}
		}
	case reflect.Map:
		for key, sub := range props {
			compare(t, doc, sub.(map[string]any), typ.Elem(), at+"."+key)
		}
		if sub, ok := node["additionalProperties"].(map[string]any); ok {
			compare(t, doc, sub, typ.Elem(), at+".*")
		}
	case reflect.Slice:
		if sub, ok := node["items"].(map[string]any); ok {
			compare(t, doc, sub, typ.Elem(), at+"[]")
		}
	}
}

// deref follows a local $ref.
func deref(t testing.TB, doc, node map[string]any) map[string]any {
	ref, ok := node["$ref"].(string)
	if !ok {
		return node
	}
	cur := any(doc)
	for _, tok := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		m, _ := cur.(map[string]any)
		cur = m[tok]
	}
	m, ok := cur.(map[string]any)
	if !ok {
		t.Fatalf("unresolved $ref %q", ref)
	}
	return deref(t, doc, m)
}

func mapKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// yamlKeys lists the yaml keys of struct t in declaration order.
func yamlKeys(t reflect.Type) []string {
	var keys []string
	for i := range t.NumField() {
		if name := yamlName(t.Field(i)); name != "" {
			keys = append(keys, name)
		}
	}
	return keys
}

func fieldByKey(t reflect.Type, key string) reflect.Type {
	for i := range t.NumField() {
		if yamlName(t.Field(i)) == key {
			return t.Field(i).Type
		}
	}
	return nil
}

func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" || !f.IsExported() {
		return ""
	}
	return name
}
