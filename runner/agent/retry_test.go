package agent

import (
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

func TestProviderRetries(t *testing.T) {
	leaky := map[string]any{"type": "error", "error": map[string]any{"type": "api_error",
		"message": "upstream exploded while using key " + testAnthropicKey + " and Bearer sk-proj-abcdefghijklmnopqrstu"}}
	tests := []struct {
		name       string
		script     []reply
		wantStatus attractor.Status
		wantClass  attractor.FailureClass
		wantReason []string
		wantCalls  int
	}{
		{"429 then success", []reply{
			{status: 429, header: map[string]string{"Retry-After-Ms": "1"}, body: map[string]any{"type": "error", "error": map[string]any{"type": "rate_limit_error", "message": "slow down"}}},
			anthropicText("done OUTCOME:SUCCESS"),
		}, attractor.StatusSuccess, "", nil, 2},
		{"500 forever", []reply{{status: 500, body: leaky}}, attractor.StatusFail, attractor.ClassTransientInfra,
			[]string{"HTTP 500", "api_error: upstream exploded", "[REDACTED]"}, 3},
		{"401 is not retried", []reply{{status: 401, body: map[string]any{"type": "error", "error": map[string]any{"type": "authentication_error", "message": "invalid x-api-key"}}}},
			attractor.StatusFail, attractor.ClassStructural, []string{"ANTHROPIC_API_KEY", "invalid x-api-key"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, tt.script...)
			a := newTestAgent(t, apiConfig(APIAnthropic, srv.URL), testDeps(t))
			req := testRequest(t, testWorktree(t), "implement")
			o, err := a.Run(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if o.Status != tt.wantStatus || o.FailureClass != tt.wantClass {
				t.Errorf("outcome = %+v", o)
			}
			for _, w := range tt.wantReason {
				if !strings.Contains(o.FailureReason, w) {
					t.Errorf("reason lacks %q: %s", w, o.FailureReason)
				}
			}
			for _, leak := range []string{testAnthropicKey, "sk-proj-"} {
				if strings.Contains(o.FailureReason, leak) || strings.Contains(readFileT(t, req.StageDir+"/transcript.jsonl"), leak) {
					t.Errorf("a secret leaked into the reason or transcript: %s", o.FailureReason)
				}
			}
			if n := len(srv.requests()); n != tt.wantCalls {
				t.Errorf("server got %d requests, want %d", n, tt.wantCalls)
			}
		})
	}
}

func TestRedact(t *testing.T) {
	tests := []struct{ in, want string }{
		{"key sk-ant-api03-abcdefghij end", "key [REDACTED] end"},
		{"openai sk-proj-abcdefghijklmnop", "openai [REDACTED]"},
		{"Authorization: Bearer abcdefghijklmnopqrstuv", "Authorization: Bearer [REDACTED]"},
		{"token ghs_abcdefghijklmnopqrstuvwxyz", "token [REDACTED]"},
		{"the value my-very-own-secret inside", "the value [REDACTED] inside"},
		{"task-list and sk-short stay", "task-list and sk-short stay"},
	}
	for _, tt := range tests {
		if got := redact(tt.in, []string{"my-very-own-secret", "short"}); got != tt.want {
			t.Errorf("redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
