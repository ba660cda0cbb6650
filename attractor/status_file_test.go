package attractor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/attractor/findings"
)

func TestDecodeStatus(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     Outcome
		wantErr  string
	}{
		{
			name: "kilroy shape",
			in:   `{"status":"fail","failure_reason":"verbose prose","failure_class":"deterministic","failure_signature":"environmental_tooling_blocks","context_updates":{"k":"v"},"notes":"n"}`,
			want: Outcome{Status: StatusFail, FailureReason: "verbose prose", ContextUpdates: map[string]any{"k": "v"}, Notes: "n",
				Meta: map[string]any{"failure_class": "deterministic", "failure_signature": "environmental_tooling_blocks"}},
		},
		{
			name: "attractor shape with preferred_label",
			in:   `{"outcome":"ok","preferred_label":"Approve","suggested_next_ids":["ship"]}`,
			want: Outcome{Status: StatusSuccess, PreferredLabel: "Approve", SuggestedNextIDs: []string{"ship"}},
		},
		{
			name: "attractor shape with preferred_next_label",
			in:   `{"outcome":"partial_success","preferred_next_label":"Fix"}`,
			want: Outcome{Status: StatusPartialSuccess, PreferredLabel: "Fix"},
		},
		{
			name: "Fabro's succeeded is success, noted",
			in:   `{"outcome":"succeeded"}`,
			want: Outcome{Status: StatusSuccess, Notes: `status file wrote "succeeded", Fabro's spelling of success: read as success.`},
		},
		{
			name: "Fabro's partially_succeeded is partial_success, noted beside the file's notes",
			in:   `{"status":"partially_succeeded","notes":"2 of 3"}`,
			want: Outcome{Status: StatusPartialSuccess, Notes: `status file wrote "partially_succeeded", Fabro's spelling of partial_success: read as partial_success. 2 of 3`},
		},
		{
			name: "Fabro's failed is fail, noted",
			in:   `{"status":"failed","failure_reason":"red"}`,
			want: Outcome{Status: StatusFail, FailureReason: "red", Notes: `status file wrote "failed", Fabro's spelling of fail: read as fail.`},
		},
		{name: "no status", in: `{"notes":"hi"}`, wantErr: `status file has neither "status" nor "outcome"`},
		{name: "unknown status", in: `{"status":"looks great!"}`, wantErr: `status file has unknown status "looks great!"`},
		{name: "wrong type", in: `{"status":1}`, wantErr: "status file does not match the status contract"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeStatus([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("outcome (-got +want):\n%s", diff)
			}
		})
	}
}

func TestStatusFilePrecedence(t *testing.T) {
	for _, tc := range []struct {
		name, cmd  string
		pre        string // written to the fallback path before the run
		wantStatus Status
		wantReason string
		wantClass  FailureClass
	}{
		{"file fail overrides exit 0", `echo '{"status":"fail","failure_reason":"lint found 3 issues"}' > $KILROY_STAGE_STATUS_PATH`, "", StatusFail, "lint found 3 issues", ClassDeterministic},
		{"file success overrides exit 1", `echo '{"outcome":"success"}' > $KILROY_STAGE_STATUS_PATH; exit 1`, "", StatusSuccess, "", ""},
		{"fallback path", `echo '{"status":"fail","failure_reason":"x","failure_class":"transient_infra"}' > $KILROY_STAGE_STATUS_FALLBACK_PATH`, "", StatusFail, "x", ClassTransientInfra},
		{"primary wins over fallback", `echo '{"status":"success"}' > $KILROY_STAGE_STATUS_PATH; echo '{"status":"fail"}' > $KILROY_STAGE_STATUS_FALLBACK_PATH`, "", StatusSuccess, "", ""},
		{"stale fallback ignored", `true`, `{"status":"fail","failure_reason":"stale"}`, StatusSuccess, "", ""},
		{"file fail without reason keeps the handler's", `echo '{"status":"fail"}' > $KILROY_STAGE_STATUS_PATH; echo boom >&2; exit 2`, "", StatusFail, "tool_command exited with status 2: boom", ClassDeterministic},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			fallback := filepath.Join(h.workspace, StatusFallbackName)
			if tc.pre != "" {
				if err := os.WriteFile(fallback, []byte(tc.pre), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, _ := runOne(t, h, fmt.Sprintf(`s [shape=parallelogram, tool_command=%q]`, tc.cmd))
			if diff := cmp.Diff([]any{got.Status, got.FailureReason, got.FailureClass}, []any{tc.wantStatus, tc.wantReason, tc.wantClass}); diff != "" {
				t.Errorf("status, reason, class (-got +want):\n%s", diff)
			}
			if _, err := os.Stat(fallback); !os.IsNotExist(err) {
				t.Errorf("fallback status file left in the workspace (stat: %v)", err)
			}
		})
	}
}

func TestStatusFileJunk(t *testing.T) {
	h := newHarness(t)
	got, _ := runOne(t, h, `s [shape=parallelogram, tool_command="printf '{\"status\": \"succ' > $KILROY_STAGE_STATUS_PATH"]`)
	want := "node s wrote status.json: status file is not valid JSON: unexpected end of JSON input"
	if got.Status != StatusFail || !strings.HasPrefix(got.FailureReason, want) {
		t.Errorf("outcome = %s %q, want fail starting %q", got.Status, got.FailureReason, want)
	}
	if diff := cmp.Diff(h.sleeps, []time.Duration{statusFileReadGap, statusFileReadGap}); diff != "" {
		t.Errorf("re-read waits (-got +want):\n%s", diff)
	}
}

func TestStatusFileSettlesWhileReread(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "status.json")
	if err := os.WriteFile(path, []byte(`{"stat`), 0o644); err != nil {
		t.Fatal(err)
	}
	// The "sleep" finishes the write, as a slow writer would meanwhile.
	sleep := func(context.Context, time.Duration) error {
		return os.WriteFile(path, []byte(`{"status":"success"}`), 0o644)
	}
	o, _, err := readStatusFile(context.Background(), sleep, path)
	if err != nil || o.Status != StatusSuccess {
		t.Errorf("readStatusFile = %v, %v; want success after the re-read", o.Status, err)
	}
}

func TestStaleStatusRemovedBeforeRetry(t *testing.T) {
	// Attempt 1 writes retry; attempt 2 writes nothing and exits 0. The
	// retry verdict must not be read again.
	h := newHarness(t)
	cmd := `n=$(( $(cat count 2>/dev/null || echo 0) + 1 )); echo $n > count; if [ $n = 1 ]; then echo '{"status":"retry"}' > $KILROY_STAGE_STATUS_FALLBACK_PATH; fi`
	got, _ := runOne(t, h, fmt.Sprintf(`s [shape=parallelogram, max_retries=1, tool_command=%q]`, cmd))
	if got.Status != StatusSuccess {
		t.Errorf("status = %s (%s), want success on the second attempt", got.Status, got.FailureReason)
	}
	if _, err := os.Stat(filepath.Join(h.runDir, "s", "history", "001", "status.json")); err != nil {
		t.Errorf("first attempt not archived: %v", err)
	}
}

// A verify node's verdict is its command's exit status: a status file may
// fail it, never pass it, so a process left behind by an earlier node
// cannot turn a red check green.
func TestStatusFileCannotPassVerify(t *testing.T) {
	for _, tc := range []struct {
		name, cmd  string
		wantStatus Status
	}{
		{"success file, command fails", `echo '{"status":"success"}' > $KILROY_STAGE_STATUS_PATH; exit 1`, StatusFail},
		{"success fallback file, command fails", `echo '{"outcome":"success"}' > $KILROY_STAGE_STATUS_FALLBACK_PATH; exit 1`, StatusFail},
		{"fail file, command passes", `echo '{"status":"fail","failure_reason":"found"}' > $KILROY_STAGE_STATUS_PATH`, StatusFail},
		{"no file, command passes", `true`, StatusSuccess},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			got, _ := runOne(t, h, fmt.Sprintf(`v [shape=octagon, command=%q]`, tc.cmd))
			if got.Status != tc.wantStatus {
				t.Errorf("status = %s (%s), want %s", got.Status, got.FailureReason, tc.wantStatus)
			}
		})
	}
}

// A status file decides the verdict, never what the bot measured: a
// verify node that fails by its status file keeps the findings its
// command printed, and an agent attempt keeps its usage and final text.
func TestStatusFileKeepsWhatTheBotMeasured(t *testing.T) {
	h := newHarness(t)
	if err := os.WriteFile(filepath.Join(h.workspace, "go.mod"), []byte("module example.test/m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _ := runOne(t, h, `v [shape=octagon, command="echo './pkg/a.go:12:5: undefined: Foo' >&2; echo '{\"status\":\"fail\",\"failure_reason\":\"vet found 1\"}' > $KILROY_STAGE_STATUS_PATH"]`)
	want := []findings.Finding{{Path: "pkg/a.go", Line: 12, Column: 5, Level: findings.LevelError, Message: "undefined: Foo", Tool: findings.ToolGo}}
	if diff := cmp.Diff(got.Findings, want); diff != "" || got.Status != StatusFail || got.FailureReason != "vet found 1" {
		t.Errorf("outcome %s %q; findings (-got +want):\n%s", got.Status, got.FailureReason, diff)
	}

	usage := &Usage{Backend: "cli", Model: "m", InputTokens: 10, OutputTokens: 5, CostUSD: 0.01, CostSource: CostReported}
	handler := Outcome{Status: StatusSuccess, Usage: usage, Response: "fixed it", Findings: want}
	file := Outcome{Status: StatusFail, FailureReason: "tests still fail"}
	o := overrideWithStatusFile(handler, file)
	if o.Status != StatusFail || o.Usage != usage || o.Response != "fixed it" || len(o.Findings) != 1 {
		t.Errorf("override = %s usage %v response %q findings %d; want fail with the handler's usage, response and finding",
			o.Status, o.Usage, o.Response, len(o.Findings))
	}
}
