// Package schema ships the JSON Schemas of the files users write for
// kilroy-bot. The schema of `.kilroy/config.yml` is the contract editors
// (yaml-language-server and the like) and package policy validate against;
// policy additionally decodes the file strictly into Go types, so the schema
// and those types must describe the same keys (a test in policy checks it).
package schema

import _ "embed"

// ConfigURL is the `$id` of the repository configuration schema.
const ConfigURL = "https://github.com/kilroy-bot/kilroy-bot/schema/config.schema.json"

//go:embed config.schema.json
var configSchema string

// Config returns the JSON Schema (draft 2020-12) of `.kilroy/config.yml`.
// Every call returns a fresh copy, so callers may keep or modify it.
func Config() []byte {
	return []byte(configSchema)
}
