// Package schema ships the JSON Schemas of the files users write for
// kilroy-bot. The schema of `.kilroy/config.yml` is the contract editors
// (yaml-language-server and the like) and package policy validate against;
// policy additionally decodes the file strictly into Go types, so the schema
// and those types must describe the same keys (a test in policy checks it).
package schema

import _ "embed"

// ConfigURL is the `$id` of the repository configuration schema: where the
// file is served, raw, from the main branch, so that an editor following
// ConfigModeline fetches the very schema the bot checks against.
const ConfigURL = RawBase + "config.schema.json"

// RawBase is where the files of this directory are served from.
const RawBase = "https://raw.githubusercontent.com/kilroy-bot/kilroy-bot/main/schema/"

// ConfigModeline is the first line of the config.yml templates: it tells
// yaml-language-server (VS Code's YAML extension, Neovim, Helix, …) which
// schema to complete and check the file with.
const ConfigModeline = "# yaml-language-server: $schema=" + ConfigURL

//go:embed config.schema.json
var configSchema string

// Config returns the JSON Schema (draft 2020-12) of `.kilroy/config.yml`.
// Every call returns a fresh copy, so callers may keep or modify it.
func Config() []byte {
	return []byte(configSchema)
}
