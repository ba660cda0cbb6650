package attractor

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// scrubHost is an execHost that is also a StageScrubber: it records, for
// every call, the stage directory and the files in it at that moment.
type scrubHost struct {
	*execHost
	mu    sync.Mutex
	calls []string // "node: file file ..."
}

func (h *scrubHost) ScrubStage(_ context.Context, dir string) {
	entries, _ := os.ReadDir(dir)
	line := filepath.Base(dir) + ":"
	for _, e := range entries {
		if e.Type().IsRegular() {
			line += " " + e.Name()
		}
	}
	h.mu.Lock()
	h.calls = append(h.calls, line)
	h.mu.Unlock()
}

// A host that scrubs stage directories gets every attempt's directory
// once the engine has written its own files there (status.json,
// invocation.json, the logs), so that nothing written afterwards escapes
// it.
func TestHostScrubsEveryStageAfterTheEngineWrites(t *testing.T) {
	h := newHarness(t)
	host := &scrubHost{execHost: h.host}
	h.cfg.Host = host
	p := mustLoad(t, chain("", `build [shape=parallelogram, tool_command="echo built"]`))
	if res := h.run(p); res.Status != StatusSuccess {
		t.Fatalf("run: %s %s", res.Status, res.FailureReason)
	}
	want := []string{"start: invocation.json status.json", "build: invocation.json status.json stderr.log stdout.log", "done: invocation.json status.json"}
	got := slices.Clone(host.calls)
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("ScrubStage calls with the files then in the stage directory (-got +want):\n%s", diff)
	}
}
