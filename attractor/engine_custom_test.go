package attractor

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// writesStatus is a tool command that writes one status file.
func writesStatus(json string) string {
	return fmt.Sprintf(`echo '%s' > "$KILROY_STAGE_STATUS_PATH"`, json)
}

func TestCustomOutcomeRouting(t *testing.T) {
	for _, tc := range []struct {
		name       string
		status     string // what check_dod writes
		edges      string // edges out of check_dod
		check      string // extra attributes of check_dod
		wantPath   []string
		wantStatus Status
		wantReason string
	}{
		{
			name:       "condition naming it beats the unconditional edge",
			status:     `{"outcome":"needs_dod"}`,
			edges:      `check_dod -> plan; check_dod -> define [condition="outcome=needs_dod"]`,
			wantPath:   []string{"start", "check_dod", "define", "done"},
			wantStatus: StatusSuccess,
		},
		{
			name:       "case folded",
			status:     `{"status":"Needs_DoD"}`,
			edges:      `check_dod -> plan; check_dod -> define [condition="outcome=needs_dod"]`,
			wantPath:   []string{"start", "check_dod", "define", "done"},
			wantStatus: StatusSuccess,
		},
		{
			name:       "label naming it",
			status:     `{"status":"needs_dod"}`,
			edges:      `check_dod -> plan; check_dod -> define [label="Needs DoD"]`,
			wantPath:   []string{"start", "check_dod", "define", "done"},
			wantStatus: StatusSuccess,
		},
		{
			name:       "success still takes the unconditional edge",
			status:     `{"status":"success"}`,
			edges:      `check_dod -> plan; check_dod -> define [condition="outcome=needs_dod"]`,
			wantPath:   []string{"start", "check_dod", "plan", "done"},
			wantStatus: StatusSuccess,
		},
		{
			name:       "a condition not naming it does not carry it",
			status:     `{"status":"has_dod"}`,
			edges:      `check_dod -> plan [condition="outcome!=fail"]; check_dod -> define [condition="outcome=needs_dod"]`,
			wantPath:   []string{"start", "check_dod"},
			wantStatus: StatusFail,
			wantReason: `node check_dod finished with custom outcome "has_dod" and no edge names it (edges: check_dod -> plan [outcome!=fail], check_dod -> define [outcome=needs_dod])`,
		},
		{
			name:       "no edge names it",
			status:     `{"status":"has_dod"}`,
			edges:      `check_dod -> plan; plan -> define [condition="outcome=fail"]`,
			wantPath:   []string{"start", "check_dod"},
			wantStatus: StatusFail,
			wantReason: `node check_dod finished with custom outcome "has_dod" and no edge names it (edges: check_dod -> plan (unconditional)); a custom outcome routes only through condition="outcome=has_dod" or an edge labelled has_dod`,
		},
		{
			name:       "counts as success for retries and goal gates",
			status:     `{"status":"needs_dod"}`,
			check:      "max_retries=3, goal_gate=true,",
			edges:      `check_dod -> plan; check_dod -> define [condition="outcome=needs_dod"]`,
			wantPath:   []string{"start", "check_dod", "define", "done"},
			wantStatus: StatusSuccess,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			res := h.run(mustLoad(t, fmt.Sprintf(`digraph t {
				start [shape=Mdiamond]; done [shape=Msquare]
				check_dod [shape=parallelogram, %s tool_command=%q]
				plan [shape=parallelogram, tool_command="true"]
				define [shape=parallelogram, tool_command="true"]
				start -> check_dod
				%s
				plan -> done; define -> done
			}`, tc.check, writesStatus(tc.status), tc.edges)))
			if diff := cmp.Diff(res.Completed, tc.wantPath); diff != "" {
				t.Errorf("path (-got +want):\n%s", diff)
			}
			if res.Status != tc.wantStatus || !strings.Contains(res.FailureReason, tc.wantReason) {
				t.Errorf("run = %s %q, want %s containing %q", res.Status, res.FailureReason, tc.wantStatus, tc.wantReason)
			}
		})
	}
}

func TestCustomOutcomeStatus(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Status
		ok   bool
	}{
		{"needs_dod", "needs_dod", true},
		{" Has_DoD ", "has_dod", true},
		{"ok", StatusSuccess, true},
		{"needs dod", "", false},
		{"2fast", "", false},
		{"", "", false},
	} {
		got, ok := ParseStatus(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseStatus(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
		if ok && got.Succeeded() != (got == StatusSuccess || got.Custom()) {
			t.Errorf("%q.Succeeded() = %v", got, got.Succeeded())
		}
	}
}
