package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// cliFlavourEnv is what a built-in CLI gets beyond a tool node's
// environment: its switches against telemetry and self-update (a node
// talks to its model provider and nothing else of the vendor's), its
// endpoint when the backend sets base_url, and for Claude Code
// IS_SANDBOX=1 when it runs as root (it refuses
// --dangerously-skip-permissions for root otherwise; the bot's sandbox, or
// the operator's container, is the sandbox it asks for), and
// CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS=1: on any HTTP 400 Claude Code
// 2.1 sends the request again without one experimental beta header after
// another (5 more requests for one 400), taking the 400 for a beta the
// endpoint refuses; without them a 400 is one request. retries is how
// often the CLI retries a failed model call itself
// (agents.limits.provider_retries; the backend's env may override it).
func cliFlavourEnv(b Backend, retries int, asRoot bool) map[string]string {
	env := map[string]string{}
	switch b.CLI {
	case CLIClaude:
		env["CLAUDE_CODE_MAX_RETRIES"] = strconv.Itoa(retries)
		env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
		env["DISABLE_AUTOUPDATER"] = "1"
		env["CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS"] = "1"
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

// cliConfigArgs are the flavour's settings on its command line. Claude
// Code gets --max-turns from agents.limits.max_turns unless the command
// names one itself. Codex takes its settings only as -c overrides: no
// update check, analytics or plugins (at start Codex syncs its curated
// plugin list from GitHub, falling back to the vendor's backend: a lookup
// of api.github.com and chatgpt.com per run), and base_url as a provider
// of its own that reads the key from the variable the bot sets and
// retries a request or a dropped stream provider_retries times (the
// built-in provider's retries cannot be changed).
func cliConfigArgs(b Backend, lim Limits) []string {
	if b.CLI == CLIClaude && lim.MaxTurns > 0 && !slices.ContainsFunc(b.Command, func(a string) bool {
		return a == "--max-turns" || strings.HasPrefix(a, "--max-turns=")
	}) {
		return []string{"--max-turns", strconv.Itoa(lim.MaxTurns)}
	}
	if b.CLI != CLICodex {
		return nil
	}
	retries := lim.ProviderRetries
	args := []string{"-c", "check_for_update_on_startup=false", "-c", "analytics.enabled=false", "-c", "features.plugins=false"}
	if b.BaseURL == "" {
		return args
	}
	p := "model_providers.kilroy."
	args = append(args, "-c", p+"name="+strconv.Quote("kilroy"), "-c", p+"base_url="+strconv.Quote(b.BaseURL),
		"-c", p+"wire_api="+strconv.Quote("responses"),
		"-c", p+"request_max_retries="+strconv.Itoa(retries), "-c", p+"stream_max_retries="+strconv.Itoa(retries))
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
// authentication it still takes its endpoint from that variable. Its
// attempts at a model call are provider_retries+1 (it allows at most 10),
// its turns max_turns (it has no flag for either).
func geminiSettings(home string, lim Limits) error {
	doc := map[string]any{
		"privacy": map[string]any{"usageStatisticsEnabled": false},
		"general": map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false,
			"maxAttempts": min(lim.ProviderRetries+1, 10)},
		"model":    map[string]any{"maxSessionTurns": lim.MaxTurns},
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
