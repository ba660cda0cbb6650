package policy

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/schema"
)

// TestSchemaMatchesTypes keeps the shipped schema and the strict decoder in
// step: every object in the schema declares exactly the keys of the Go type
// the decoder uses at that place.
func TestSchemaMatchesTypes(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(schema.Config(), &doc); err != nil {
		t.Fatal(err)
	}
	compareSchema(t, doc, doc, reflect.TypeFor[fileConfig](), "config")
}

func compareSchema(t *testing.T, doc, node map[string]any, typ reflect.Type, at string) {
	t.Helper()
	node = deref(t, doc, node)
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	props, _ := node["properties"].(map[string]any)
	switch typ.Kind() {
	case reflect.Struct:
		if diff := cmp.Diff(sortedKeys(props), slices.Sorted(slices.Values(yamlKeys(typ)))); diff != "" {
			t.Errorf("%s: schema properties (-schema +Go type %s):\n%s", at, typ, diff)
		}
		for _, key := range yamlKeys(typ) {
			if sub, ok := props[key].(map[string]any); ok {
				ft, _ := fieldByKey(typ, key)
				compareSchema(t, doc, sub, ft, at+"."+key)
			}
		}
	case reflect.Map:
		for key, sub := range props {
			compareSchema(t, doc, sub.(map[string]any), typ.Elem(), at+"."+key)
		}
		if sub, ok := node["additionalProperties"].(map[string]any); ok {
			compareSchema(t, doc, sub, typ.Elem(), at+".*")
		}
	case reflect.Slice:
		if sub, ok := node["items"].(map[string]any); ok {
			compareSchema(t, doc, sub, typ.Elem(), at+"[]")
		}
	}
}

// deref follows a local $ref.
func deref(t *testing.T, doc, node map[string]any) map[string]any {
	ref, ok := node["$ref"].(string)
	if !ok {
		return node
	}
	cur := any(doc)
	for _, tok := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		cur = cur.(map[string]any)[tok]
	}
	if cur == nil {
		t.Fatalf("unresolved $ref %q", ref)
	}
	return deref(t, doc, cur.(map[string]any))
}
