package agent

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// The OpenAI-compatible provider goes through the same retry policy as
// the Anthropic one: rate limits and server errors are retried with
// backoff up to Limits.ProviderRetries, a rejected key is not, and what
// reaches the failure reason is redacted.
func TestOpenAIProviderRetries(t *testing.T) {
	openaiErr := func(typ, msg string) map[string]any {
		return map[string]any{"error": map[string]any{"type": typ, "message": msg}}
	}
	leaky := openaiErr("server_error", "upstream exploded while using key "+testOpenAIKey+
		" and Bearer sk-ant-abcdefghijklmnopqrstu")
	tests := []struct {
		name       string
		script     []reply
		wantStatus attractor.Status
		wantClass  attractor.FailureClass
		wantReason []string
		wantCalls  int
	}{
		{"429 with Retry-After then success", []reply{
			{status: 429, header: map[string]string{"Retry-After-Ms": "1"}, body: openaiErr("rate_limit_error", "slow down")},
			openaiCalls("done OUTCOME:SUCCESS"),
		}, attractor.StatusSuccess, "", nil, 2},
		{"429 without Retry-After uses the backoff", []reply{
			{status: 429, body: openaiErr("rate_limit_error", "slow down")},
			openaiCalls("done OUTCOME:SUCCESS"),
		}, attractor.StatusSuccess, "", nil, 2},
		{"503 then success", []reply{
			{status: 503, body: openaiErr("server_error", "overloaded")},
			openaiCalls("done OUTCOME:SUCCESS"),
		}, attractor.StatusSuccess, "", nil, 2},
		{"500 forever", []reply{{status: 500, body: leaky}}, attractor.StatusFail, attractor.ClassTransientInfra,
			[]string{"after 2 retries", "HTTP 500", "upstream exploded", "[REDACTED]"}, 3},
		{"401 is not retried", []reply{{status: 401, body: openaiErr("invalid_request_error", "Incorrect API key provided")}},
			attractor.StatusFail, attractor.ClassStructural, []string{"OPENAI_API_KEY", "Incorrect API key provided"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, tt.script...)
			a := newTestAgent(t, apiConfig(APIOpenAI, srv.URL+"/v1/"), testDeps(t))
			req := testRequest(t, testWorktree(t), "implement")
			o, err := a.Run(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			reqs := srv.requests()
			got := []any{o.Status, o.FailureClass, len(reqs)}
			want := []any{tt.wantStatus, tt.wantClass, tt.wantCalls}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("status, class, requests (-got +want):\n%s\nreason: %s", diff, o.FailureReason)
			}
			for _, w := range tt.wantReason {
				if !strings.Contains(o.FailureReason, w) {
					t.Errorf("reason lacks %q: %s", w, o.FailureReason)
				}
			}
			for _, leak := range []string{testOpenAIKey, "sk-ant-"} {
				if strings.Contains(o.FailureReason, leak) || strings.Contains(readFileT(t, req.StageDir+"/transcript.jsonl"), leak) {
					t.Errorf("a secret leaked into the reason or transcript: %s", o.FailureReason)
				}
			}
			// A retry repeats the same call: every request is the first
			// turn of the conversation, to the chat completions endpoint.
			for i, r := range reqs {
				if msgs := messageCount(r); r.Path != "/v1/chat/completions" || msgs == 0 || msgs != messageCount(reqs[0]) {
					t.Errorf("request %d: path %s, %d messages; want the first request repeated", i, r.Path, msgs)
				}
			}
		})
	}
}

func messageCount(r recorded) int {
	m, _ := r.Body["messages"].([]any)
	return len(m)
}
