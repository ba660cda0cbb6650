package policy

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// strictDoc is a small file shape for DecodeYAML, with its schema.
type strictDoc struct {
	Name  string                 `yaml:"name"`
	Inner map[string]strictInner `yaml:"inner"`
}

type strictInner struct {
	Kind  string `yaml:"kind"`
	Count int    `yaml:"count"`
}

const strictSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object", "additionalProperties": false,
  "properties": {
    "name": {"type": "string"},
    "inner": {"type": "object", "additionalProperties": {
      "type": "object", "additionalProperties": false, "required": ["kind"],
      "properties": {"kind": {"enum": ["a", "b"]}, "count": {"type": "integer", "minimum": 0}}}}
  }
}`

// TestDecodeYAML: another file decoded strictly reports its problems the
// way .kilroy/config.yml does, each at its file, line and column.
func TestDecodeYAML(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string // "LINE:COL message" of each problem; nil = decodes
	}{
		{name: "empty", yaml: "# nothing yet\n"},
		{name: "valid", yaml: "name: x\ninner:\n  one: {kind: a, count: 2}\n"},
		{name: "unknown key", yaml: "name: x\ninner:\n  one:\n    kind: a\n    cuont: 2\n",
			want: []string{`5:5 unknown key "cuont" in inner.one (known: kind, count); did you mean "count"?`}},
		{name: "schema", yaml: "inner:\n  one:\n    kind: c\n",
			want: []string{`3:5 inner.one.kind: value must be one of 'a', 'b', got "c"`}},
		{name: "required", yaml: "inner:\n  one: {count: 1}\n",
			want: []string{`2:3 missing key "kind" in inner.one`}},
		{name: "duplicate", yaml: "name: x\nname: y\n",
			want: []string{`2:1 duplicate key "name" in top level (first at line 1); keep one`}},
		{name: "syntax", yaml: "name: [x\n",
			want: []string{"1:1 invalid YAML: did not find expected ',' or ']'"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d strictDoc
			_, err := DecodeYAML("policy.yml", []byte(tc.yaml), "https://example.com/strict.schema.json", []byte(strictSchema), &d)
			var got []string
			var errs ConfigErrors
			switch {
			case errors.As(err, &errs):
				for _, e := range errs {
					if e.File != "policy.yml" {
						t.Errorf("problem in file %q, want policy.yml", e.File)
					}
					got = append(got, place(e)+" "+e.Msg)
				}
			case err != nil:
				t.Fatalf("DecodeYAML: %v, want ConfigErrors", err)
			}
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("problems (-got +want):\n%s", diff)
			}
		})
	}
}

func place(e *ConfigError) string { return fmt.Sprintf("%d:%d", e.Line, e.Col) }

// TestLocatedErrorf places a problem found after decoding at its key, or
// the nearest enclosing key present.
func TestLocatedErrorf(t *testing.T) {
	var d strictDoc
	loc, err := DecodeYAML("policy.yml", []byte("name: x\ninner:\n  one:\n    kind: a\n"), "https://example.com/s.json", []byte(strictSchema), &d)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path []string
		want string
	}{
		{[]string{"inner", "one", "kind"}, "policy.yml:4:5: inner.one.kind: bad"},
		{[]string{"inner", "one", "count"}, "policy.yml:3:3: inner.one.count: bad"},
		{[]string{"other"}, "policy.yml:1:1: other: bad"},
	} {
		if got := loc.Errorf(tc.path, "bad").Error(); got != tc.want {
			t.Errorf("Errorf(%v) = %q, want %q", tc.path, got, tc.want)
		}
	}
}
