package agent

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

func selectConfig() Config {
	return Config{
		Default: "claude",
		Backends: map[string]Backend{
			"claude": {Kind: KindCLI, CLI: CLIClaude, Models: []string{"claude-sonnet-*", "claude-opus-4"}},
			"gpt":    {Kind: KindAPI, API: APIOpenAI, Model: "gpt-5", Models: []string{"gpt-5", "gpt-5-mini"}},
			"local":  {Kind: KindAPI, API: APIOpenAI, Provider: "ollama", NoKey: true, BaseURL: "http://localhost:11434/v1/"},
		},
	}
}

func TestSelectBackend(t *testing.T) {
	tests := []struct {
		name                    string
		provider, model, effort string
		wantBackend, wantModel  string
		wantFail                []string
	}{
		{name: "default", wantBackend: "claude"},
		{name: "by name", provider: "gpt", wantBackend: "gpt", wantModel: "gpt-5"},
		{name: "by provider", provider: "openai", model: "gpt-5-mini", wantBackend: "gpt", wantModel: "gpt-5-mini"},
		{name: "alias", provider: "Claude", model: "claude-sonnet-4-5", wantBackend: "claude", wantModel: "claude-sonnet-4-5"},
		{name: "custom provider", provider: "ollama", model: "qwen3", wantBackend: "local", wantModel: "qwen3"},
		{name: "disallowed provider", provider: "google", wantFail: []string{"llm_provider=google", "claude (cli claude, provider anthropic, models claude-sonnet-* claude-opus-4)", "gpt (api openai"}},
		{name: "disallowed model", provider: "gpt", model: "gpt-4o", wantFail: []string{`model "gpt-4o"`, "allowed: gpt-5, gpt-5-mini"}},
		{name: "api needs a model", provider: "local", wantFail: []string{"needs a model", "agents.backends.local.model"}},
		{name: "bad effort", effort: "extreme", wantFail: []string{`reasoning_effort="extreme"`, "low, medium, high"}},
		{name: "effort", effort: "HIGH", wantBackend: "claude"},
	}
	a := newTestAgent(t, selectConfig(), testDeps(t))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := &attractor.Node{ID: "impl", LLMProvider: tt.provider, LLMModel: tt.model, ReasoningEffort: tt.effort}
			sel, fail := a.selectBackend(n)
			if len(tt.wantFail) > 0 {
				if fail == nil || fail.FailureClass != attractor.ClassStructural {
					t.Fatalf("got %+v, %+v; want a structural failure", sel, fail)
				}
				for _, w := range tt.wantFail {
					if !strings.Contains(fail.FailureReason, w) {
						t.Errorf("reason lacks %q: %s", w, fail.FailureReason)
					}
				}
				return
			}
			if fail != nil {
				t.Fatalf("failure: %s", fail.FailureReason)
			}
			if sel.name != tt.wantBackend || sel.model != tt.wantModel {
				t.Errorf("selected %s/%s, want %s/%s", sel.name, sel.model, tt.wantBackend, tt.wantModel)
			}
		})
	}
}

// A missing key fails the node structural, naming the variable, before
// anything runs.
func TestMissingKey(t *testing.T) {
	deps := testDeps(t)
	delete(deps.HostEnv, "OPENAI_API_KEY")
	a := newTestAgent(t, selectConfig(), deps)
	req := testRequest(t, t.TempDir(), "impl")
	req.Node.LLMProvider = "gpt"
	o, err := a.Run(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != attractor.StatusFail || o.FailureClass != attractor.ClassStructural || !strings.Contains(o.FailureReason, "OPENAI_API_KEY") {
		t.Errorf("outcome = %+v", o)
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"unknown default", Config{Default: "x", Backends: map[string]Backend{"a": {Kind: KindCLI, CLI: CLIClaude}}}, `agents.default: "x" is not one of agents.backends (a)`},
		{"misspelt default", Config{Default: "cluade", Backends: map[string]Backend{"claude": {Kind: KindCLI, CLI: CLIClaude}}}, `did you mean "claude"?`},
		{"unknown kind", Config{Backends: map[string]Backend{"a": {Kind: "magic"}}}, `agents.backends.a.kind: "magic"`},
		{"unknown cli", Config{Backends: map[string]Backend{"a": {Kind: KindCLI, CLI: "aider"}}}, `agents.backends.a.cli: "aider"`},
		{"command without template", Config{Backends: map[string]Backend{"a": {Kind: KindCLI, CLI: CLICommand, NoKey: true}}}, "needs command"},
		{"command without key decision", Config{Backends: map[string]Backend{"a": {Kind: KindCLI, CLI: CLICommand, Command: []string{"x"}}}}, "agents.backends.a.key_env: empty"},
		{"secret in env", Config{Backends: map[string]Backend{"a": {Kind: KindCLI, CLI: CLIClaude, Env: map[string]string{"MY_TOKEN": "x"}}}}, "MY_TOKEN looks like a secret"},
		{"bad model pattern", Config{Backends: map[string]Backend{"a": {Kind: KindCLI, CLI: CLIClaude, Models: []string{"[x"}}}}, "not a valid pattern"},
	}
	for _, tt := range tests {
		if _, err := New(tt.cfg, Deps{}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: New error = %v, want it to contain %q", tt.name, err, tt.want)
		}
	}
}

// The configuration decodes from JSON (and YAML, through the same text
// unmarshalling) with Attractor durations, and New fills the defaults.
func TestConfigDecodeAndDefaults(t *testing.T) {
	var cfg Config
	src := `{"default":"c","backends":{"c":{"kind":"cli","cli":"codex","models":["gpt-5*"]}},"limits":{"timeout":"1h30m","max_turns":7}}`
	if err := json.Unmarshal([]byte(src), &cfg); err != nil {
		t.Fatal(err)
	}
	a := newTestAgent(t, cfg, Deps{})
	if a.lim.Timeout != Duration(90*time.Minute) || a.lim.MaxTurns != 7 || a.lim.MaxToolRounds != defaultMaxToolRounds {
		t.Errorf("limits = %+v", a.lim)
	}
	b := a.cfg.Backends["c"]
	if b.Provider != ProviderOpenAI || b.KeyEnv != "OPENAI_API_KEY" || b.ChildKeyEnv != "CODEX_API_KEY" || b.Command[0] != "codex" {
		t.Errorf("codex defaults = %+v", b)
	}
	if err := json.Unmarshal([]byte(`{"limits":{"timeout":"15 minutes"}}`), &cfg); err == nil {
		t.Error("a bad duration decoded")
	}
}
