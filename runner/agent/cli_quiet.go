package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
)

// cliFlavourEnv is what a built-in CLI gets beyond a tool node's
// environment: its switches against telemetry and self-update (a node
// talks to its model provider and nothing else of the vendor's), its
// endpoint when the backend sets base_url, and for Claude Code
// IS_SANDBOX=1 when it runs as root (it refuses
// --dangerously-skip-permissions for root otherwise; the bot's sandbox, or
// the operator's container, is the sandbox it asks for).
func cliFlavourEnv(b Backend, asRoot bool) map[string]string {
	env := map[string]string{}
	switch b.CLI {
	case CLIClaude:
		env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
		env["DISABLE_AUTOUPDATER"] = "1"
		if b.BaseURL != "" {
			env["ANTHROPIC_BASE_URL"] = b.BaseURL
		}
		if asRoot {
			env["IS_SANDBOX"] = "1"
		}
	case CLIGemini:
		env["GEMINI_TELEMETRY_ENABLED"] = "false"
		env["GEMINI_CLI_TRUST_WORKSPACE"] = "true" // headless runs refuse an untrusted folder
		if b.BaseURL != "" {
			env["GOOGLE_GEMINI_BASE_URL"] = b.BaseURL
		}
	}
	return env
}

// cliConfigArgs are Codex's equivalents, which it takes only as -c
// overrides: no update check or analytics, and base_url as a provider of
// its own that reads the key from the variable the bot sets.
func cliConfigArgs(b Backend) []string {
	if b.CLI != CLICodex {
		return nil
	}
	args := []string{"-c", "check_for_update_on_startup=false", "-c", "analytics.enabled=false"}
	if b.BaseURL == "" {
		return args
	}
	p := "model_providers.kilroy."
	args = append(args, "-c", p+"name="+strconv.Quote("kilroy"), "-c", p+"base_url="+strconv.Quote(b.BaseURL),
		"-c", p+"wire_api="+strconv.Quote("responses"))
	if !b.NoKey {
		args = append(args, "-c", p+"env_key="+strconv.Quote(b.ChildKeyEnv))
	}
	return append(args, "-c", "model_provider="+strconv.Quote("kilroy"))
}

// geminiSettings turns off the Gemini CLI's usage statistics and update
// checks, which only its settings file controls, in the isolated HOME, and
// selects API-key authentication: without a selected method the CLI picks
// "gateway" when GOOGLE_GEMINI_BASE_URL is set, which its headless mode
// then refuses ("Invalid auth method selected", exit 41). With API-key
// authentication it still takes its endpoint from that variable.
func geminiSettings(home string) error {
	doc := map[string]any{
		"privacy":  map[string]any{"usageStatisticsEnabled": false},
		"general":  map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
		"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Join(home, ".gemini")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "settings.json"), b, 0o600)
}
