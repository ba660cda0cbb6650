package agent

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Providers, as node llm_provider values name them.
const (
	ProviderAnthropic = "anthropic"
	ProviderOpenAI    = "openai"
	ProviderGoogle    = "google"
)

// cliDefaults are the built-in command templates. The prompt (preamble
// included) is given on stdin: argv is visible to every process on the
// host and limited in length.
//
// Claude Code and Codex run with their own permission prompts and sandbox
// off: they run unattended, and Codex's sandbox would also deny writes to
// the toolchain caches pinned under the real HOME. The node's boundary is
// the environment NodeEnv builds (no bot secrets), as for tool nodes.
var cliDefaults = map[string]Backend{
	CLIClaude: {
		Provider:   ProviderAnthropic,
		KeyEnv:     "ANTHROPIC_API_KEY",
		Command:    []string{"claude", "-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions", "{model_args}", "{effort_args}"},
		ModelArgs:  []string{"--model", "{model}"},
		EffortArgs: []string{"--effort", "{reasoning_effort}"},
	},
	CLICodex: {
		Provider:    ProviderOpenAI,
		KeyEnv:      "OPENAI_API_KEY",
		ChildKeyEnv: "CODEX_API_KEY",
		Command: []string{"codex", "exec", "--json", "--skip-git-repo-check",
			"--dangerously-bypass-approvals-and-sandbox", "{config_args}", "{model_args}", "{effort_args}", "-"},
		ModelArgs:  []string{"--model", "{model}"},
		EffortArgs: []string{"-c", "model_reasoning_effort={reasoning_effort}"},
	},
	CLIGemini: {
		Provider:  ProviderGoogle,
		KeyEnv:    "GEMINI_API_KEY",
		Command:   []string{"gemini", "--output-format", "json", "--yolo", "{model_args}"},
		ModelArgs: []string{"--model", "{model}"},
	},
}

var apiDefaults = map[string]Backend{
	APIAnthropic: {Provider: ProviderAnthropic, KeyEnv: "ANTHROPIC_API_KEY", BaseURL: "https://api.anthropic.com/"},
	APIOpenAI:    {Provider: ProviderOpenAI, KeyEnv: "OPENAI_API_KEY", BaseURL: "https://api.openai.com/v1/"},
}

// withDefaults fills what the configuration left empty from the CLI or
// API defaults. Slices and maps are never shared with the defaults.
func (b Backend) withDefaults() Backend {
	var d Backend
	switch b.Kind {
	case KindCLI:
		d = cliDefaults[b.CLI]
	case KindAPI:
		d = apiDefaults[b.API]
	}
	b.Provider = strings.ToLower(or(b.Provider, d.Provider))
	b.KeyEnv = or(b.KeyEnv, d.KeyEnv)
	b.ChildKeyEnv = or(b.ChildKeyEnv, or(d.ChildKeyEnv, b.KeyEnv))
	b.BaseURL = or(b.BaseURL, d.BaseURL)
	if len(b.Command) == 0 {
		b.Command = slices.Clone(d.Command)
	}
	if b.ModelArgs == nil {
		b.ModelArgs = slices.Clone(d.ModelArgs)
	}
	if b.EffortArgs == nil {
		b.EffortArgs = slices.Clone(d.EffortArgs)
	}
	if b.MaxTokens <= 0 {
		b.MaxTokens = defaultMaxTokens
	}
	b.Env = maps.Clone(b.Env)
	return b
}

func (b Backend) validate() *KeyError {
	switch b.Kind {
	case KindCLI:
		if _, ok := cliDefaults[b.CLI]; !ok && b.CLI != CLICommand {
			return keyErrorf("cli", "%q is not one of claude, codex, gemini, command", b.CLI)
		}
		if len(b.Command) == 0 {
			return keyErrorf("command", `cli "command" needs command: [program, args...]`)
		}
	case KindAPI:
		if _, ok := apiDefaults[b.API]; !ok {
			return keyErrorf("api", "%q is not one of anthropic, openai", b.API)
		}
	default:
		return keyErrorf("kind", "%q is not cli or api", b.Kind)
	}
	if !b.NoKey && b.KeyEnv == "" {
		return keyErrorf("key_env", "empty: name the variable holding the provider key, or set no_key: true")
	}
	for _, p := range b.Models {
		if !doublestar.ValidatePattern(p) {
			return keyErrorf("models", "%q is not a valid pattern", p)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(b.Env)) {
		if looksSecret(k) {
			return keyErrorf("env", "%s looks like a secret; keys come only from key_env", k)
		}
	}
	return nil
}

// allowsModel reports whether model matches one of b.Models (any when
// b.Models is empty).
func (b Backend) allowsModel(model string) bool {
	if len(b.Models) == 0 {
		return true
	}
	for _, p := range b.Models {
		if ok, _ := doublestar.Match(p, model); ok {
			return true
		}
	}
	return false
}

// describe is a backend in a failure reason: "claude (cli claude,
// provider anthropic)".
func (b Backend) describe(name string) string {
	how := b.Kind + " " + b.CLI + b.API
	s := fmt.Sprintf("%s (%s, provider %s", name, how, or(b.Provider, "none"))
	if len(b.Models) > 0 {
		s += ", models " + strings.Join(b.Models, " ")
	}
	return s + ")"
}

func backendNames(m map[string]Backend) string {
	names := slices.Sorted(maps.Keys(m))
	if len(names) == 0 {
		return "none configured"
	}
	return strings.Join(names, ", ")
}

func or(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

// looksSecret is a conservative name check for configured extras; the
// sandbox strips such names from every node anyway.
func looksSecret(name string) bool {
	n := strings.ToUpper(name)
	for _, part := range []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL"} {
		if strings.Contains(n, part) {
			return true
		}
	}
	return false
}
