package attractor

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestStateDeltaReplay: the deltas of a real run's checkpoints, each
// through JSON as a host persists them, replay to the State of every
// checkpoint, as a full State through JSON would read back; both the
// deltas the engine hands its host and DiffState's of the snapshots. The
// pipelines
// cover retries, loop restarts (maps losing keys, completed_nodes leaving
// the context), goal gates and parallel branches.
func TestStateDeltaReplay(t *testing.T) {
	restart := fmt.Sprintf(restartPipeline, countingTool(
		`{"status":"fail","failure_reason":"runner lost","failure_class":"transient_infra"}`, `{"status":"success"}`))
	retries := chain("", `work [shape=parallelogram, max_retries=2, tool_command=`+
		fmt.Sprintf("%q", countingTool(`{"status":"retry","failure_reason":"not yet"}`, `{"status":"success","context_updates":{"n":{"deep":[1,2]}}}`))+`]`)
	gate := fmt.Sprintf(goalGatePipeline, "", "max_retries=0, retry_target=work,",
		countingTool(`{"status":"fail","failure_reason":"flaky"}`, `{"status":"success"}`))
	parallel := `digraph t {
		start [shape=Mdiamond]; done [shape=Msquare]
		fan [shape=component]; join [shape=tripleoctagon]
		a [shape=parallelogram, tool_command="true"]
		b [shape=parallelogram, tool_command="true"]
		start -> fan; fan -> a -> join; fan -> b -> join; join -> done
	}`
	for _, tc := range []struct{ name, src string }{
		{"retries", retries}, {"loop restart", restart}, {"goal gate", gate}, {"parallel", parallel},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := forkHarness(t)
			runWithin(t, h, loadAnyway(t, tc.src))
			if len(h.host.checkpoints) < 3 {
				t.Fatalf("only %d checkpoints", len(h.host.checkpoints))
			}
			var prev *State
			replayed, diffed := &State{}, &State{}
			for i, c := range h.host.checkpoints {
				replayed.Apply(roundTrip[StateDelta](t, c.Delta))
				diffed.Apply(roundTrip[StateDelta](t, DiffState(prev, c.State)))
				want := roundTrip[any](t, c.State)
				if diff := cmp.Diff(roundTrip[any](t, replayed), want); diff != "" {
					t.Fatalf("engine's deltas replayed to checkpoint %d (%s) (-got +want):\n%s", i+1, c.Node.ID, diff)
				}
				if diff := cmp.Diff(roundTrip[any](t, diffed), want); diff != "" {
					t.Fatalf("DiffState's deltas replayed to checkpoint %d (%s) (-got +want):\n%s", i+1, c.Node.ID, diff)
				}
				prev = c.State
			}
		})
	}
}

// TestStateDeltaSize: a node's delta is as large at node 200 of a chain as
// at node 10; the full State grows with the run.
func TestStateDeltaSize(t *testing.T) {
	nodes := make([]string, 200)
	for i := range nodes {
		nodes[i] = fmt.Sprintf(`n%03d [shape=parallelogram, tool_command="true"]`, i)
	}
	h := newHarness(t)
	h.run(mustLoad(t, chain("", nodes...)))
	size := func(i int) (delta, full int) {
		c := h.host.checkpoints
		d, _ := json.Marshal(c[i].Delta)
		f, _ := json.Marshal(c[i].State)
		return len(d), len(f)
	}
	d10, f10 := size(10)
	d200, f200 := size(200)
	if d200 != d10 {
		t.Errorf("delta at node 200 is %d bytes, at node 10 %d; want the same", d200, d10)
	}
	if f200 < 10*f10 {
		t.Errorf("full state at node 200 is %d bytes, at node 10 %d: the test no longer measures a growing state", f200, f10)
	}
}

func roundTrip[T any](t *testing.T, v any) T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("decode %s: %v", strings.TrimSpace(string(b)), err)
	}
	return out
}

// TestDiffMapDeletions: a key of prev that next lacks is a deletion, the
// skipped key never is, whichever side holds it.
func TestDiffMapDeletions(t *testing.T) {
	same := func(a, b int) bool { return a == b }
	for _, tc := range []struct {
		name       string
		prev, next map[string]int
		skip       string
		set        map[string]int
		del        []string
	}{
		{"none gone", map[string]int{"a": 1}, map[string]int{"a": 1, "b": 2}, "", map[string]int{"b": 2}, nil},
		{"one gone, one added", map[string]int{"a": 1, "b": 2}, map[string]int{"a": 1, "c": 3}, "", map[string]int{"c": 3}, []string{"b"}},
		{"all replaced", map[string]int{"a": 1}, map[string]int{"b": 1}, "", map[string]int{"b": 1}, []string{"a"}},
		{"skip only in prev", map[string]int{"a": 1, "s": 1}, map[string]int{"a": 1}, "s", nil, nil},
		{"skip in both, one gone", map[string]int{"a": 1, "b": 1, "s": 1}, map[string]int{"a": 1, "s": 2}, "s", nil, []string{"b"}},
		{"skip only in next, one gone", map[string]int{"a": 1, "b": 1}, map[string]int{"a": 1, "s": 1}, "s", nil, []string{"b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := diffMap(tc.prev, tc.next, tc.skip, same)
			var set map[string]int
			var del []string
			if d != nil {
				set, del = d.Set, d.Del
			}
			if diff := cmp.Diff(tc.set, set); diff != "" {
				t.Errorf("set (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.del, del); diff != "" {
				t.Errorf("deleted (-want +got):\n%s", diff)
			}
		})
	}
}
