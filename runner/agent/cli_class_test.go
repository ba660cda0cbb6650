package agent

import (
	"testing"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// The failure class of a CLI agent comes from the HTTP status the CLI
// printed; words alone decide only for a broken stream.
func TestCLIFailureClass(t *testing.T) {
	tests := []struct {
		text string
		want attractor.FailureClass
	}{
		{`API Error: 500 {"type":"error","error":{"type":"api_error","message":"internal server error"}}`, attractor.ClassTransientInfra},
		{`API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, attractor.ClassTransientInfra},
		{`API Error: 401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`, attractor.ClassStructural},
		{`API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"messages: field required"}}`, attractor.ClassDeterministic},
		{`unexpected status 401 Unauthorized: {"error":{"message":"bad key"}}`, attractor.ClassStructural},
		{`exceeded retry limit, last status: 502 Bad Gateway`, attractor.ClassTransientInfra},
		{`stream disconnected before completion: error sending request`, attractor.ClassTransientInfra},
		{`{"error":{"type":"ApiError","message":"quota","code":429}}`, attractor.ClassTransientInfra},
		{`[GoogleGenerativeAI Error]: got status: 403 Forbidden`, attractor.ClassStructural},
		{`Error: HTTP 404 model not found`, attractor.ClassDeterministic},
		{`The service is overloaded, try later`, attractor.ClassTransientInfra},
		// Claude Code 2.1 names no status for a rejected key.
		{`Invalid API key · Fix external API key`, attractor.ClassStructural},
		{`Error: API key not valid. Please pass a valid API key.`, attractor.ClassStructural},
		{`tests failed: 3 of 120 (see log line 500)`, ""},
		{`go vet: exit status 1`, ""},
	}
	for _, tt := range tests {
		if got := cliFailureClass(tt.text); got != tt.want {
			t.Errorf("cliFailureClass(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}
