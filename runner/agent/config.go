package agent

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// Config is the agents section of the server or local configuration. The
// caller decodes it (strictly) and hands it to New, which fills defaults.
// It holds names of environment variables, never key values.
type Config struct {
	// Default is the backend of nodes whose llm_provider is empty.
	Default string `yaml:"default" json:"default"`
	// Backends are the allowed backends by name. A node may use only these.
	Backends map[string]Backend `yaml:"backends" json:"backends"`
	Limits   Limits             `yaml:"limits" json:"limits"`
	// Budgets cap what runs' agents may spend (the server's caps over a
	// repository's limits.max_cost_usd and limits.max_tokens).
	Budgets Budgets `yaml:"budgets" json:"budgets"`
	// Runtime is the bot's agent runtime (runner/agentrt): a directory
	// holding the CLI packages and a Node runtime, which a CLI node whose
	// image lacks its CLI runs from, bound read-only.
	Runtime string `yaml:"runtime,omitempty" json:"runtime,omitempty"`
}

// Budgets are the operator's caps on agent spending; zero is no cap.
type Budgets struct {
	PerRunUSD               float64 `yaml:"per_run_usd" json:"per_run_usd"`
	PerRunTokens            int64   `yaml:"per_run_tokens" json:"per_run_tokens"`
	PerInstallationDailyUSD float64 `yaml:"per_installation_daily_usd" json:"per_installation_daily_usd"`
}

// Backend kinds.
const (
	KindCLI = "cli" // a CLI agent run through the sandbox
	KindAPI = "api" // this package's agent loop over a provider API
)

// CLI flavours: which defaults and which output parser a CLI backend gets.
const (
	CLIClaude  = "claude"
	CLICodex   = "codex"
	CLIGemini  = "gemini"
	CLICommand = "command" // any command; its stdout is the response
)

// API protocols.
const (
	APIAnthropic = "anthropic" // Anthropic Messages
	APIOpenAI    = "openai"    // OpenAI-compatible chat completions
)

// Backend is one allowed agent backend.
type Backend struct {
	Kind string `yaml:"kind" json:"kind"` // cli or api
	CLI  string `yaml:"cli,omitempty" json:"cli,omitempty"`
	API  string `yaml:"api,omitempty" json:"api,omitempty"`
	// Provider is what a node's llm_provider matches besides the backend
	// name; it defaults from CLI or API (claude → anthropic, codex → openai,
	// gemini → google).
	Provider string `yaml:"provider,omitempty" json:"provider,omitempty"`
	// Models are the allowed models (doublestar patterns such as
	// "claude-*"); empty allows any.
	Models []string `yaml:"models,omitempty" json:"models,omitempty"`
	// Model is used when a node sets no llm_model. API backends need one.
	Model string `yaml:"model,omitempty" json:"model,omitempty"`

	// KeyEnv names the bot's environment variable holding the provider
	// key; it defaults from the provider (ANTHROPIC_API_KEY,
	// OPENAI_API_KEY, GEMINI_API_KEY). NoKey says none is needed (a local
	// model server, a command that needs no key).
	KeyEnv string `yaml:"key_env,omitempty" json:"key_env,omitempty"`
	NoKey  bool   `yaml:"no_key,omitempty" json:"no_key,omitempty"`
	// ChildKeyEnv is the name under which a CLI agent receives the key;
	// it defaults to KeyEnv (CODEX_API_KEY for codex, which reads that in
	// exec mode).
	ChildKeyEnv string `yaml:"child_key_env,omitempty" json:"child_key_env,omitempty"`

	// API backends.
	BaseURL   string           `yaml:"base_url,omitempty" json:"base_url,omitempty"`
	MaxTokens int              `yaml:"max_tokens,omitempty" json:"max_tokens,omitempty"`
	Prices    map[string]Price `yaml:"prices,omitempty" json:"prices,omitempty"`

	// CLI backends. Command is the argv template; see expandArgv for the
	// placeholders. ModelArgs and EffortArgs are inserted at {model_args}
	// and {effort_args} (appended when absent) only when the node has a
	// model or a reasoning effort, so no flag is ever passed an empty
	// value.
	Command    []string `yaml:"command,omitempty" json:"command,omitempty"`
	ModelArgs  []string `yaml:"model_args,omitempty" json:"model_args,omitempty"`
	EffortArgs []string `yaml:"effort_args,omitempty" json:"effort_args,omitempty"`
	// SharedHome runs the CLI with the real HOME instead of an isolated
	// one under the stage directory.
	SharedHome bool `yaml:"shared_home,omitempty" json:"shared_home,omitempty"`
	// Env holds extra, non-secret variables for the CLI (feature flags).
	// Names that look like secrets are refused by New.
	Env map[string]string `yaml:"env,omitempty" json:"env,omitempty"`
}

// Price is a model's price in US dollars per million tokens, by kind.
// Cache reads and writes cost what input does unless priced themselves.
type Price struct {
	Input      float64  `yaml:"input" json:"input"`
	Output     float64  `yaml:"output" json:"output"`
	CacheRead  *float64 `yaml:"cache_read,omitempty" json:"cache_read,omitempty"`
	CacheWrite *float64 `yaml:"cache_write,omitempty" json:"cache_write,omitempty"`
}

// Limits bound every agent session.
type Limits struct {
	MaxTurns      int `yaml:"max_turns" json:"max_turns"`             // model calls per API session
	MaxToolRounds int `yaml:"max_tool_rounds" json:"max_tool_rounds"` // tool rounds per API session
	// Timeout applies when a node sets none.
	Timeout Duration `yaml:"timeout" json:"timeout"`
	// ShellTimeout is the API shell tool's default; a call may ask for up
	// to ShellMaxTimeout.
	ShellTimeout    Duration `yaml:"shell_timeout" json:"shell_timeout"`
	ShellMaxTimeout Duration `yaml:"shell_max_timeout" json:"shell_max_timeout"`
	// MaxLogBytes caps each CLI log file in the stage directory.
	MaxLogBytes int64 `yaml:"max_log_bytes" json:"max_log_bytes"`
	// ProviderRetries is how often a 408, 409, 429 or 5xx answer or a
	// network error is retried, waiting RetryBackoff, doubling up to
	// RetryMaxBackoff (or what Retry-After asks, within that bound).
	ProviderRetries int      `yaml:"provider_retries" json:"provider_retries"`
	RetryBackoff    Duration `yaml:"retry_backoff" json:"retry_backoff"`
	RetryMaxBackoff Duration `yaml:"retry_max_backoff" json:"retry_max_backoff"`
}

// Duration decodes from Attractor durations such as "15m" or "1d".
type Duration time.Duration

// UnmarshalText implements encoding.TextUnmarshaler (YAML and JSON).
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := attractor.ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) {
	return []byte(time.Duration(d).String()), nil
}

// Defaults, in one place.
const (
	defaultMaxTurns        = 200
	defaultMaxToolRounds   = 150
	defaultTimeout         = 45 * time.Minute
	defaultShellTimeout    = 2 * time.Minute
	defaultShellMaxTimeout = 15 * time.Minute
	defaultMaxLogBytes     = 32 << 20
	defaultRetries         = 4
	defaultRetryBackoff    = time.Second
	defaultRetryMaxBackoff = 30 * time.Second
	defaultMaxTokens       = 16000 // below the SDK's non-streaming ceiling
)

func (l Limits) withDefaults() Limits {
	setInt(&l.MaxTurns, defaultMaxTurns)
	setInt(&l.MaxToolRounds, defaultMaxToolRounds)
	setDur(&l.Timeout, defaultTimeout)
	setDur(&l.ShellTimeout, defaultShellTimeout)
	setDur(&l.ShellMaxTimeout, defaultShellMaxTimeout)
	if l.MaxLogBytes <= 0 {
		l.MaxLogBytes = defaultMaxLogBytes
	}
	if l.ProviderRetries == 0 {
		l.ProviderRetries = defaultRetries
	}
	l.ProviderRetries = max(l.ProviderRetries, 0) // negative: no retries
	setDur(&l.RetryBackoff, defaultRetryBackoff)
	setDur(&l.RetryMaxBackoff, defaultRetryMaxBackoff)
	return l
}

func setInt(p *int, def int) {
	if *p <= 0 {
		*p = def
	}
}

func setDur(p *Duration, def time.Duration) {
	if *p <= 0 {
		*p = Duration(def)
	}
}

// validate checks the configuration once, so Run only meets valid
// backends. Backends are checked in name order, so the problem reported is
// always the same one.
func (c Config) validate() error {
	if c.Default != "" {
		if _, ok := c.Backends[c.Default]; !ok {
			e := keyErrorf("default", "%q is not one of agents.backends (%s)", c.Default, backendNames(c.Backends))
			if s := attractor.Suggest(c.Default, slices.Collect(maps.Keys(c.Backends))); s != "" {
				e.Msg += fmt.Sprintf("; did you mean %q?", s)
			}
			return e
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Backends)) {
		if e := c.Backends[name].validate(); e != nil {
			e.Path = append([]string{"backends", name}, e.Path...)
			return e
		}
	}
	return nil
}

// KeyError is a problem with one key of the agents configuration; Path
// says which, below `agents:` (["backends", "claude", "models"]), so that
// whoever decoded the file can point at its line.
type KeyError struct {
	Path []string
	Msg  string
}

func (e *KeyError) Error() string {
	return "agents." + strings.Join(e.Path, ".") + ": " + e.Msg
}

func keyErrorf(key, format string, args ...any) *KeyError {
	return &KeyError{Path: []string{key}, Msg: fmt.Sprintf(format, args...)}
}
