package attractor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// orderHost is an execHost that also writes each checkpoint request into
// the recorder, so the test sees where the host's work falls among the
// events.
type orderHost struct {
	*execHost
	rec *recorder
}

func (h orderHost) Checkpoint(ctx context.Context, req CheckpointRequest) (string, error) {
	h.rec.add("host checkpoint " + req.Node.ID)
	return h.execHost.Checkpoint(ctx, req)
}

// fileRecorder records each announced attempt with the status its stage
// directory's status.json holds at that moment.
type fileRecorder struct{ *recorder }

func (r fileRecorder) AttemptFinished(_ context.Context, ev AttemptFinished) error {
	var o Outcome
	b, err := os.ReadFile(filepath.Join(ev.Dir, "status.json"))
	if err == nil {
		err = json.Unmarshal(b, &o)
	}
	file := string(o.Status)
	if err != nil {
		file = "unreadable: " + err.Error()
	}
	if _, err := os.Stat(filepath.Join(ev.Dir, "invocation.json")); err != nil {
		file += ", no invocation.json"
	}
	r.add(fmt.Sprintf("attempt %s#%d %s (status.json: %s)", ev.Node.ID, ev.Attempt, ev.Outcome.Status, file))
	return nil
}

// A node's last attempt is announced after the host was asked for its
// checkpoint (the stage files are written meanwhile) and before the
// checkpoint is announced; every attempt is announced only once its
// status.json and invocation.json are on disk.
func TestAttemptAnnouncedOnceItsStageFilesAreWritten(t *testing.T) {
	h := newHarness(t)
	h.cfg.Host = orderHost{execHost: h.host, rec: h.rec}
	h.cfg.Listener = fileRecorder{h.rec}
	flaky := `test -f marker || { touch marker; echo '{\"status\":\"retry\"}' > $KILROY_STAGE_STATUS_PATH; }`
	p := mustLoad(t, chain("", `flaky [shape=parallelogram, max_retries=1, tool_command="`+flaky+`"]`))
	if res := h.run(p); res.Status != StatusSuccess {
		t.Fatalf("run: %s %s", res.Status, res.FailureReason)
	}
	var got []string
	for _, e := range h.rec.events {
		if strings.Contains(e, "flaky") && !strings.HasPrefix(e, "edge") {
			got = append(got, e)
		}
	}
	want := []string{
		"start flaky",
		"attempt flaky#1 retry (status.json: retry)",
		"host checkpoint flaky",
		"attempt flaky#2 success (status.json: success)",
		"checkpoint flaky",
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("events of node flaky (-got +want):\n%s", diff)
	}
}

// Stage files that cannot be written stop the run and say which node's
// and why; the node's own outcome is not rewritten into a failure.
func TestStageFilesUnwritableStopTheRun(t *testing.T) {
	h := newHarness(t)
	// A directory that is not empty where status.json goes: it cannot be
	// replaced.
	p := mustLoad(t, chain("", `mk [shape=parallelogram, tool_command="mkdir -p $KILROY_STAGE_LOGS_DIR/invocation.json/x"]`))
	res := h.run(p)
	want := "could not write the stage files of node mk"
	if res.Status != StatusFail || res.FailureClass != ClassTransientInfra || !strings.Contains(res.FailureReason, want) {
		t.Fatalf("run: %s %s %q, want a transient_infra stop saying %q", res.Status, res.FailureClass, res.FailureReason, want)
	}
	if got := h.host.checkpointNodes(); !strings.Contains(strings.Join(got, " "), "mk") {
		t.Errorf("checkpoints %v: the node's work is committed before the stop", got)
	}
}
