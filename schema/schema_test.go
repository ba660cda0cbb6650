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

func TestConfigSchemaCompiles(t *testing.T) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Config()))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(ConfigURL, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(ConfigURL)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	if got := doc.(map[string]any)["$id"]; got != ConfigURL {
		t.Errorf("$id = %v, want ConfigURL %q", got, ConfigURL)
	}
	for _, tc := range []struct {
		doc   string
		valid bool
	}{
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
	} {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(tc.doc)))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(v); (err == nil) != tc.valid {
			t.Errorf("Validate(%s) = %v, want valid=%v", tc.doc, err, tc.valid)
		}
	}
}

// TestConfigSchemaClosed checks that every object schema says what else it
// allows: false, or the schema of a map's values.
func TestConfigSchemaClosed(t *testing.T) {
	var doc any
	if err := json.Unmarshal(Config(), &doc); err != nil {
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
	if objects < 10 {
		t.Errorf("found %d object schemas, want at least 10: the walk is broken", objects)
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
	name := strings.TrimPrefix(ConfigURL, RawBase)
	if _, err := os.Stat(name); err != nil || name == ConfigURL {
		t.Errorf("ConfigURL %q does not name a file of this directory: %v", ConfigURL, err)
	}
	if want := "# yaml-language-server: $schema=" + ConfigURL; ConfigModeline != want {
		t.Errorf("ConfigModeline = %q, want %q", ConfigModeline, want)
	}
}
