package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/runner/agent/agenttest"
)

// The API backend against the fake model server, for both protocols: each
// fault ends in the class the engine's retry policy needs, after the
// number of requests it implies, and the reason only mentions retries
// that happened.
func TestAPIBackendFaults(t *testing.T) {
	done := agenttest.Text("done OUTCOME:SUCCESS")
	fail := agenttest.Failing
	tests := []struct {
		name      string
		script    []agenttest.Turn
		wantClass attractor.FailureClass // "" is success
		wantCalls int
		reason    []string // wanted in the reason
		notReason []string
	}{
		{"happy path with a tool round", []agenttest.Turn{agenttest.Tool("read_file", map[string]any{"path": "main.go"}), done}, "", 2, nil, nil},
		{"cut once then success", []agenttest.Turn{fail(agenttest.CutStream), done}, "", 2, nil, nil},
		{"429 then success", []agenttest.Turn{fail(agenttest.RateLimited), done}, "", 2, nil, nil},
		{"cut always", []agenttest.Turn{fail(agenttest.CutStream)}, attractor.ClassTransientInfra, 3, []string{"after 2 retries"}, nil},
		{"500 always", []agenttest.Turn{fail(agenttest.ServerError)}, attractor.ClassTransientInfra, 3, []string{"after 2 retries", "HTTP 500"}, nil},
		{"529 always", []agenttest.Turn{fail(agenttest.Overloaded)}, attractor.ClassTransientInfra, 3, []string{"HTTP 529"}, nil},
		{"401", []agenttest.Turn{fail(agenttest.BadKey)}, attractor.ClassStructural, 1, []string{"rejected the key"}, []string{"retries"}},
		{"400", []agenttest.Turn{fail(agenttest.BadRequest)}, attractor.ClassDeterministic, 1,
			[]string{"HTTP 400", "messages: field required"}, []string{"retries"}},
	}
	for _, api := range []string{APIAnthropic, APIOpenAI} {
		for _, tt := range tests {
			t.Run(api+"/"+tt.name, func(t *testing.T) {
				srv := agenttest.New(t, tt.script...)
				a := newTestAgent(t, apiConfig(api, srv.URL+"/v1/"), testDeps(t))
				if api == APIAnthropic {
					a = newTestAgent(t, apiConfig(api, srv.URL), testDeps(t))
				}
				o, err := a.Run(t.Context(), testRequest(t, testWorktree(t), "implement"))
				if err != nil {
					t.Fatal(err)
				}
				wantStatus := attractor.StatusFail
				if tt.wantClass == "" {
					wantStatus = attractor.StatusSuccess
				}
				got := []any{o.Status, o.FailureClass, srv.Calls()}
				if diff := cmp.Diff(got, []any{wantStatus, tt.wantClass, tt.wantCalls}); diff != "" {
					t.Errorf("status, class, calls (-got +want):\n%s\nreason: %s", diff, o.FailureReason)
				}
				for _, w := range tt.reason {
					if !strings.Contains(o.FailureReason, w) {
						t.Errorf("reason lacks %q: %s", w, o.FailureReason)
					}
				}
				for _, w := range tt.notReason {
					if strings.Contains(o.FailureReason, w) {
						t.Errorf("reason has %q: %s", w, o.FailureReason)
					}
				}
			})
		}
	}
}

// A timed-out API session keeps what the model said so far, as a CLI's
// does: agent.json says it timed out and response.md holds the last text,
// both for the node's deadline (the engine reports it) and for the
// configured default.
func TestAPITimeoutKeepsResponse(t *testing.T) {
	halfway := agenttest.Turn{Text: "halfway there", Calls: []agenttest.Call{{Name: "shell", Args: map[string]any{"command": "sleep 60"}}}}
	for _, nodeDeadline := range []bool{true, false} {
		t.Run(map[bool]string{true: "node deadline", false: "default timeout"}[nodeDeadline], func(t *testing.T) {
			srv := agenttest.New(t, halfway)
			cfg := apiConfig(APIAnthropic, srv.URL)
			cfg.Limits.Timeout = Duration(500 * time.Millisecond)
			a := newTestAgent(t, cfg, testDeps(t))
			ctx := t.Context()
			if nodeDeadline {
				c, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
				defer cancel()
				ctx = c
			}
			req := testRequest(t, testWorktree(t), "n")
			o, err := a.Run(ctx, req)
			switch {
			case nodeDeadline && !errors.Is(err, context.DeadlineExceeded):
				t.Errorf("err = %v, want DeadlineExceeded", err)
			case !nodeDeadline && (err != nil || o.Response != "halfway there" || !strings.Contains(o.FailureReason, "timed out")):
				t.Errorf("outcome %+v, err %v; want a timeout keeping the response", o, err)
			}
			if got := readFileT(t, filepath.Join(req.StageDir, "agent.json")); !strings.Contains(got, `"timed_out": true`) {
				t.Errorf("agent.json does not say it timed out:\n%s", got)
			}
			if got, _ := os.ReadFile(filepath.Join(req.StageDir, "response.md")); string(got) != "halfway there" {
				t.Errorf("response.md = %q, want what the model said so far", got)
			}
		})
	}
}
