package agent

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/runner/agent/agenttest"
)

// Each CLI's output splits into the four kinds of tokens the way its
// provider bills them: Claude Code's usage has each kind apart; Codex's
// input_tokens and Gemini's prompt count the cached ones too; Gemini's
// thoughts are output. The lines are shaped like what the pinned CLIs
// printed against the fake server.
func TestCLIUsageByKind(t *testing.T) {
	tests := []struct {
		flavour string
		out     string
		want    Usage
		model   string
	}{
		{CLIClaude, `{"type":"system","subtype":"init","model":"claude-x"}
{"type":"result","subtype":"success","result":"ok","total_cost_usd":0.5,"usage":{"input_tokens":1555,"cache_creation_input_tokens":890,"cache_read_input_tokens":15000,"output_tokens":101}}`,
			Usage{InputTokens: 1555, CacheWriteTokens: 890, CacheReadTokens: 15000, OutputTokens: 101}, "claude-x"},
		{CLICodex, `{"type":"turn.completed","usage":{"input_tokens":16555,"cached_input_tokens":15000,"cache_write_input_tokens":0,"output_tokens":101,"reasoning_output_tokens":0}}`,
			Usage{InputTokens: 1555, CacheReadTokens: 15000, OutputTokens: 101}, ""},
		{CLIGemini, `{"response":"ok","stats":{"models":{
  "gemini-pro":{"tokens":{"input":1555,"prompt":16555,"candidates":101,"total":16656,"cached":15000,"thoughts":7,"tool":0}},
  "gemini-lite":{"tokens":{"input":100,"prompt":100,"candidates":10,"total":110,"cached":0,"thoughts":0,"tool":0}}}}}`,
			Usage{InputTokens: 1655, CacheReadTokens: 15000, OutputTokens: 118}, "gemini-lite,gemini-pro"},
	}
	for _, tt := range tests {
		t.Run(tt.flavour, func(t *testing.T) {
			rep := parseCLIOutput(tt.flavour, []byte(tt.out))
			if diff := cmp.Diff(rep.Usage, tt.want); diff != "" {
				t.Errorf("usage (-got +want):\n%s", diff)
			}
			if rep.Model != tt.model {
				t.Errorf("model %q, want %q", rep.Model, tt.model)
			}
		})
	}
}

// Prices are per million tokens by kind; cache reads and writes cost what
// input does unless priced; patterns match model names; no price, no cost.
func TestCostByKind(t *testing.T) {
	read, write := 0.3, 3.75
	b := Backend{Prices: map[string]Price{
		"m-exact": {Input: 1, Output: 2},
		"m-*":     {Input: 3, Output: 15, CacheRead: &read, CacheWrite: &write},
	}}
	u := Usage{InputTokens: 1_000_000, OutputTokens: 2_000_000, CacheReadTokens: 3_000_000, CacheWriteTokens: 4_000_000}
	for _, tt := range []struct {
		model string
		want  float64
		ok    bool
	}{
		{"m-exact", 1*1 + 2*2 + 3*1 + 4*1, true},
		{"m-other", 1*3 + 2*15 + 3*read + 4*write, true},
		{"x", 0, false},
	} {
		if got, ok := b.cost(tt.model, u); ok != tt.ok || got != tt.want {
			t.Errorf("cost(%s) = %v, %v; want %v, %v", tt.model, got, ok, tt.want, tt.ok)
		}
	}
}

// The budget gate: a run whose budget is reached starts no attempt
// (budget_exhausted, naming the key, budget-limited); a cost budget with a
// backend whose cost cannot be known refuses it (structural); the daily
// budget's refusal stops the API loop before its next call.
func TestBudgetGate(t *testing.T) {
	srv := agenttest.New(t, agenttest.Tool("shell", map[string]any{"command": "true"}))
	t.Run("reached", func(t *testing.T) {
		a := newTestAgent(t, apiConfig(APIAnthropic, srv.URL), testDeps(t))
		req := testRequest(t, testWorktree(t), "n")
		req.Usage = attractor.NewUsageMeter(attractor.UsageTotal{InputTokens: 500}, attractor.Budget{MaxTokens: 500, TokensKey: "limits.max_tokens in X"})
		srv.Reset(agenttest.Text("never asked"))
		o, err := a.Run(t.Context(), req)
		if err != nil || o.FailureClass != attractor.ClassBudgetExhausted || !strings.Contains(o.FailureReason, "limits.max_tokens in X") ||
			o.Meta[attractor.MetaBudgetLimited] != true || srv.Calls() != 0 {
			t.Errorf("outcome %+v, %v, %d calls; want budget_exhausted before any call", o, err, srv.Calls())
		}
	})
	t.Run("cost unknown", func(t *testing.T) {
		cfg := apiConfig(APIAnthropic, srv.URL)
		b := cfg.Backends["api"]
		b.Prices = nil
		cfg.Backends["api"] = b
		a := newTestAgent(t, cfg, testDeps(t))
		req := testRequest(t, testWorktree(t), "n")
		req.Usage = attractor.NewUsageMeter(attractor.UsageTotal{}, attractor.Budget{MaxCostUSD: 1, CostKey: "limits.max_cost_usd in X"})
		o, err := a.Run(t.Context(), req)
		if err != nil || o.FailureClass != attractor.ClassStructural || !strings.Contains(o.FailureReason, "agents.backends.api.prices") {
			t.Errorf("outcome %+v, %v; want structural naming the prices to set", o, err)
		}
	})
	t.Run("daily refusal", func(t *testing.T) {
		a := newTestAgent(t, apiConfig(APIAnthropic, srv.URL), testDeps(t))
		req := testRequest(t, testWorktree(t), "n")
		calls := 0
		spent := errors.New("installation 1's daily agent budget is spent")
		req.Usage = attractor.NewUsageMeter(attractor.UsageTotal{}, attractor.Budget{
			Charge: func(attractor.Usage) error {
				if calls++; calls >= 2 {
					return spent
				}
				return nil
			},
		})
		srv.Reset(agenttest.Tool("shell", map[string]any{"command": "true"}))
		o, err := a.Run(t.Context(), req)
		if err != nil || o.FailureClass != attractor.ClassBudgetExhausted || !strings.Contains(o.FailureReason, spent.Error()) || srv.Calls() != 2 {
			t.Errorf("outcome %+v, %v, %d calls; want budget_exhausted after the 2nd call", o, err, srv.Calls())
		}
		if o.Usage == nil || o.Usage.InputTokens != 200 {
			t.Errorf("usage %+v, want the two calls' 200 input tokens", o.Usage)
		}
	})
}
