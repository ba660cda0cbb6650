package attractor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStageEnvAndContextKeys(t *testing.T) {
	h := newHarness(t)
	dump := `env | grep ^KILROY_ | sort > "$KILROY_NODE_ID.env"`
	res := h.run(mustLoad(t, chain(`goal="green build"`,
		`a [shape=parallelogram, tool_command="exit 0"]`,
		`b [shape=parallelogram, tool_command=`+strconvQuote(dump)+`]`)))
	env, err := os.ReadFile(filepath.Join(h.workspace, "b.env"))
	if err != nil {
		t.Fatal(err)
	}
	stage := filepath.Join(h.runDir, "b")
	want := strings.Join([]string{
		"KILROY_NODE_ID=b",
		"KILROY_PREDECESSOR_NODE=a",
		"KILROY_PREDECESSOR_OUTCOME=success",
		"KILROY_RUN_ID=run1",
		"KILROY_STAGE_LOGS_DIR=" + stage,
		"KILROY_STAGE_STATUS_FALLBACK_PATH=" + filepath.Join(h.workspace, ".kilroy-status.json"),
		"KILROY_STAGE_STATUS_PATH=" + filepath.Join(stage, "status.json"),
	}, "\n") + "\n"
	if diff := cmp.Diff(string(env), want); diff != "" {
		t.Errorf("stage env (-got +want):\n%s", diff)
	}
	keys := map[string]string{}
	for _, k := range []string{"outcome", "preferred_label", "failure_reason", "failure_class", "current_node",
		"previous_node", "last_stage", "completed_nodes", "graph.goal", "internal.retry_count.a", "tool.exit_status"} {
		keys[k] = stringView(res.Context)[k]
	}
	wantKeys := map[string]string{
		"outcome": "success", "preferred_label": "", "failure_reason": "", "failure_class": "",
		"current_node": "done", "previous_node": "b", "last_stage": "done",
		"completed_nodes": `["start","a","b","done"]`, "graph.goal": "green build",
		"internal.retry_count.a": "0", "tool.exit_status": "0",
	}
	if diff := cmp.Diff(keys, wantKeys); diff != "" {
		t.Errorf("context keys (-got +want):\n%s", diff)
	}
}

func strconvQuote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// artifactHost adds the verify.artifacts capability to the test host.
type artifactHost struct {
	*execHost
	got ArtifactCheckRequest
}

func (h *artifactHost) CheckArtifacts(_ context.Context, req ArtifactCheckRequest) (Outcome, error) {
	h.got = req
	return Outcome{Status: StatusFail, FailureReason: "artifact_policy_violation: target/debug/app"}, nil
}

func TestVerifyArtifactsUsesHostChecker(t *testing.T) {
	h := newHarness(t)
	ah := &artifactHost{execHost: h.host}
	h.cfg.Host = ah
	got, _ := runOne(t, h, `arts [type="verify.artifacts"]`)
	if got.Status != StatusFail || got.FailureReason != "artifact_policy_violation: target/debug/app" {
		t.Errorf("outcome = %s %q", got.Status, got.FailureReason)
	}
	if ah.got.Node == nil || ah.got.Node.ID != "arts" || ah.got.Workspace != h.workspace {
		t.Errorf("checker got %+v", ah.got)
	}
}

// failingListener fails every event; the run must not notice.
type failingListener struct{ NopListener }

func (failingListener) NodeStarted(context.Context, NodeStarted) error {
	return errors.New("check run API down")
}

func TestListenerErrorsAreNotFatal(t *testing.T) {
	h := newHarness(t)
	h.cfg.Listener = Listeners{failingListener{}, h.rec}
	res := h.run(mustLoad(t, chain("", `a [shape=parallelogram, tool_command="true"]`)))
	if res.Status != StatusSuccess {
		t.Errorf("run = %s %q, want success despite the listener", res.Status, res.FailureReason)
	}
	if h.rec.events[len(h.rec.events)-1] != "finished success" {
		t.Errorf("second listener missed events: %v", h.rec.events)
	}
}
