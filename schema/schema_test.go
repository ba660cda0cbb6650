package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compile compiles a shipped schema and checks its $id is id.
func compile(t *testing.T, data []byte, id string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(id, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(id)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	if got := doc.(map[string]any)["$id"]; got != id {
		t.Errorf("$id = %v, want %q", got, id)
	}
	return sch
}

type schemaCase struct {
	doc   string
	valid bool
}

func checkCases(t *testing.T, sch *jsonschema.Schema, cases []schemaCase) {
	t.Helper()
	for _, tc := range cases {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(tc.doc)))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(v); (err == nil) != tc.valid {
			t.Errorf("Validate(%s) = %v, want valid=%v", tc.doc, err, tc.valid)
		}
	}
}

func TestServerPolicySchemaCompiles(t *testing.T) {
	sch := compile(t, ServerPolicy(), ServerPolicyURL)
	checkCases(t, sch, []schemaCase{
		{`{}`, true},
		{`{"app_slug": "kb", "max_annotations": 1000}`, true},
		{`{"max_annotations": 1001}`, false},
		{`{"app_slugg": "kb"}`, false},
		{`{"agents": {"default": "c", "backends": {"c": {"kind": "cli", "cli": "claude", "models": ["claude-*"]}}}}`, true},
		{`{"agents": {"backends": {"c": {"kind": "cli"}}}}`, false},
		{`{"agents": {"backends": {"c": {"kind": "api", "api": "openai", "model": "m", "base_url": "http://localhost:8000/v1/", "no_key": true}}}}`, true},
		{`{"agents": {"backends": {"c": {"kind": "telepathy"}}}}`, false},
		{`{"agents": {"backends": {"c": {"kind": "cli", "cli": "claude", "key_env": "NOT A NAME"}}}}`, false},
		{`{"agents": {"backends": {"c": {"kind": "api", "api": "anthropic", "prices": {"m": {"input": 3, "output": 15}}}}}}`, true},
		{`{"agents": {"limits": {"timeout": "45m", "provider_retries": -1}}}`, true},
		{`{"agents": {"limits": {"timeout": 2700}}}`, false},
	})
}

func TestConfigSchemaCompiles(t *testing.T) {
	sch := compile(t, Config(), ConfigURL)
	checkCases(t, sch, []schemaCase{
		{`{"version": 1}`, true},
		{`{"version": 1, "pipelines": {"ci": null, "lint": {"on": {"paths": ["**/*.go"]}}}}`, true},
		{`{"version": 1, "limits": {"run_timeout": "1h30m", "node_timeout": "90s"}}`, true},
		{`{}`, false},
		{`{"version": 1, "extra": true}`, false},
		{`{"version": 1, "limits": {"run_timeout": "1d", "node_timeout": "250ms"}}`, true},
		{`{"version": 1, "limits": {"run_timeout": "2d12h", "node_timeout": "1.5h"}}`, true},
		{`{"version": 1, "limits": {"run_timeout": "soon"}}`, false},
		{`{"version": 1, "limits": {"run_timeout": "5 minutes"}}`, false},
		{`{"version": 1, "limits": {"run_timeout": "1us"}}`, false},
		{`{"version": 1, "limits": {"run_timeout": "-5m"}}`, false},
		{`{"version": 1, "limits": {"run_timeout": ".5h"}}`, false},
		{`{"version": 1, "artifact_policy": {"env": {"managed_roots": {"generic": "x"}}}}`, false},
	})
}

// TestConfigSchemaClosed checks that every object schema says what else it
// allows: false, or the schema of a map's values.
func TestConfigSchemaClosed(t *testing.T) {
	checkClosed(t, Config(), 10)
	checkClosed(t, ServerPolicy(), 5)
}

func checkClosed(t *testing.T, data []byte, atLeast int) {
	t.Helper()
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	objects := 0
	var walk func(v any, at string)
	walk = func(v any, at string) {
		switch v := v.(type) {
		case map[string]any:
			if isObjectSchema(v["type"]) {
				objects++
				if _, ok := v["additionalProperties"]; !ok {
					t.Errorf("%s: object schema without additionalProperties", at)
				}
			}
			for k, sub := range v {
				walk(sub, at+"/"+k)
			}
		case []any:
			for i, sub := range v {
				walk(sub, fmt.Sprintf("%s/%d", at, i))
			}
		}
	}
	walk(doc, "#")
	if objects < atLeast {
		t.Errorf("found %d object schemas, want at least %d: the walk is broken", objects, atLeast)
	}
}

func isObjectSchema(typ any) bool {
	switch typ := typ.(type) {
	case string:
		return typ == "object"
	case []any:
		for _, t := range typ {
			if t == "object" {
				return true
			}
		}
	}
	return false
}

func TestConfigReturnsCopy(t *testing.T) {
	a := Config()
	a[0] = 'x'
	if b := Config(); b[0] != '{' {
		t.Errorf("Config() shares memory between calls: first byte %q", b[0])
	}
}

// The $id is where this package's file is served raw from the main
// branch: an editor that follows the yaml-language-server line fetches the
// schema the bot checks with, not a page that serves nothing.
func TestConfigURLServesThisFile(t *testing.T) {
	const module = "github.com/kilroy-bot/kilroy-bot"
	want := "https://raw.githubusercontent.com/" + strings.TrimPrefix(module, "github.com/") + "/main/schema/"
	if RawBase != want {
		t.Errorf("RawBase = %q, want %q (the raw URL of this directory on main)", RawBase, want)
	}
	for _, tc := range []struct{ url, modeline string }{
		{ConfigURL, ConfigModeline},
		{ServerPolicyURL, ServerPolicyModeline},
	} {
		name := strings.TrimPrefix(tc.url, RawBase)
		if _, err := os.Stat(name); err != nil || name == tc.url {
			t.Errorf("%q does not name a file of this directory: %v", tc.url, err)
		}
		if want := "# yaml-language-server: $schema=" + tc.url; tc.modeline != want {
			t.Errorf("modeline = %q, want %q", tc.modeline, want)
		}
	}
}
