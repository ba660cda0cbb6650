package agent

import (
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// A session stopped by max_turns or max_tool_rounds fails budget_exhausted
// unless the agent declared success first (seed 003).
func TestLimits(t *testing.T) {
	echo := [3]string{"c", "shell", `{"command":"echo working"}`}
	writeStatus := [3]string{"c", "shell", `{"command":"printf '{\"status\":\"success\"}' > \"$KILROY_STAGE_STATUS_PATH\""}`}
	tests := []struct {
		name       string
		turns      int
		rounds     int
		reply      reply
		wantStatus attractor.Status
		wantClass  attractor.FailureClass
		wantReason string
		wantCalls  int
	}{
		{"turn limit", 2, 100, openaiCalls("still working", echo), attractor.StatusFail, attractor.ClassBudgetExhausted, "max_turns", 2},
		{"turn limit after success marker", 2, 100, openaiCalls("all done OUTCOME:SUCCESS", echo), attractor.StatusSuccess, "", "", 2},
		{"turn limit, FAIL wins over SUCCESS", 2, 100, openaiCalls("OUTCOME:SUCCESS? no: OUTCOME:FAIL", echo), attractor.StatusFail, attractor.ClassBudgetExhausted, "max_turns", 2},
		{"round limit", 100, 1, openaiCalls("", echo), attractor.StatusFail, attractor.ClassBudgetExhausted, "max_tool_rounds", 2},
		{"round limit after status file", 100, 1, openaiCalls("", writeStatus), attractor.StatusSuccess, "", "", 2},
		{"round limit after marker", 100, 3, openaiCalls("OUTCOME=success", echo), attractor.StatusSuccess, "", "", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, tt.reply)
			cfg := apiConfig(APIOpenAI, srv.URL+"/v1/")
			cfg.Limits.MaxTurns, cfg.Limits.MaxToolRounds = tt.turns, tt.rounds
			a := newTestAgent(t, cfg, testDeps(t))
			o, err := a.Run(t.Context(), testRequest(t, testWorktree(t), "implement"))
			if err != nil {
				t.Fatal(err)
			}
			if o.Status != tt.wantStatus || o.FailureClass != tt.wantClass || !strings.Contains(o.FailureReason, tt.wantReason) {
				t.Errorf("outcome = %s/%s %q; want %s/%s containing %q", o.Status, o.FailureClass, o.FailureReason, tt.wantStatus, tt.wantClass, tt.wantReason)
			}
			if n := len(srv.requests()); n != tt.wantCalls {
				t.Errorf("model called %d times, want %d", n, tt.wantCalls)
			}
		})
	}
}

func TestOutcomeMarker(t *testing.T) {
	tests := []struct {
		text string
		want attractor.Status
		ok   bool
	}{
		{"done\nOUTCOME:SUCCESS", attractor.StatusSuccess, true},
		{"outcome=pass", attractor.StatusSuccess, true},
		{"Outcome : Fail", attractor.StatusFail, true},
		{"OUTCOME:SUCCESS then OUTCOME=FAIL", attractor.StatusFail, true},
		{"OUTCOME:FAIL then OUTCOME:PASS", attractor.StatusFail, true},
		{"no marker here", "", false},
		{"OUTCOMES:SUCCESS", "", false},
		{"OUTCOME:SUCCESSFUL", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		got, ok := outcomeMarker(tt.text)
		if got != tt.want || ok != tt.ok {
			t.Errorf("outcomeMarker(%q) = %q, %v; want %q, %v", tt.text, got, ok, tt.want, tt.ok)
		}
	}
}

// At natural completion: the status file outranks markers; without
// either the engine decides (auto_status or a failure saying how to report).
func TestFinalVerdict(t *testing.T) {
	ws := t.TempDir()
	tests := []struct {
		name   string
		status string // status file content; "" for none
		final  string
		want   attractor.Status
	}{
		{"nothing", "", "I changed things.", ""},
		{"marker", "", "OUTCOME:PASS", attractor.StatusSuccess},
		{"marker fail", "", "tests fail. OUTCOME:FAIL", attractor.StatusFail},
		{"status file wins over marker", `{"status":"retry"}`, "OUTCOME:SUCCESS", attractor.StatusRetry},
		{"attractor shape", `{"outcome":"success"}`, "OUTCOME:FAIL", attractor.StatusSuccess},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := testRequest(t, ws, "n")
			if tt.status != "" {
				writeFileT(t, req.StageEnv[attractor.EnvStatusPath], tt.status)
			}
			if o := finalVerdict(req, tt.final); o.Status != tt.want {
				t.Errorf("status = %q, want %q (%+v)", o.Status, tt.want, o)
			}
		})
	}
}
