// Package schema ships the JSON Schemas of the files users write for
// kilroy-bot: `.kilroy/config.yml` and the server policy file (`serve
// --config`, `run --agents`). Each is the contract editors
// (yaml-language-server and the like) and the bot validate against; the bot
// additionally decodes the file strictly into Go types, so a schema and
// its types must describe the same keys (tests in policy and cmd/kilroy-bot
// check it).
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

//go:embed server-policy.schema.json
var serverPolicySchema string

// ServerPolicyURL is the `$id` of the server policy schema, served like
// ConfigURL.
const ServerPolicyURL = RawBase + "server-policy.schema.json"

// ServerPolicyModeline, as the first line of a server policy file, gives
// editors its schema.
const ServerPolicyModeline = "# yaml-language-server: $schema=" + ServerPolicyURL

// ServerPolicy returns the JSON Schema (draft 2020-12) of the server
// policy file, a fresh copy per call.
func ServerPolicy() []byte {
	return []byte(serverPolicySchema)
}

// Config returns the JSON Schema (draft 2020-12) of `.kilroy/config.yml`.
// Every call returns a fresh copy, so callers may keep or modify it.
func Config() []byte {
	return []byte(configSchema)
}
