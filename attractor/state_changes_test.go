package attractor

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// Every run in this package's tests checks each checkpoint's delta
// against DiffState of snapshots, and panics on a difference.
func init() { checkStateDeltas = true }

// TestNotedDeltaIsDiffState: after random writes through the State's
// methods and its Context (outcomes, counters, context keys set, reset
// and deleted, loop restarts, goal gates, completed_nodes mirrored or
// not), delta gives what DiffState gives for a snapshot taken at the
// delta before.
func TestNotedDeltaIsDiffState(t *testing.T) {
	for seed := range uint64(50) {
		rng := rand.New(rand.NewPCG(seed, 1))
		st := newState("run")
		st.track()
		st.changes.was = nil // compared below, not by the check
		rc := &Context{m: st.Context, changing: st.noteContext}
		was := st.clone()
		key := func(prefix string) string { return fmt.Sprintf("%s%d", prefix, rng.IntN(6)) }
		for step := range 300 {
			switch rng.IntN(11) {
			case 0:
				st.setOutcome(key("n"), Outcome{Status: []Status{StatusSuccess, StatusFail}[rng.IntN(2)]})
			case 1:
				st.setRetries(key("n"), rng.IntN(3))
			case 2:
				st.setVisits(key("n"), rng.IntN(3))
			case 3:
				st.addSignature(key("sig"), 1)
			case 4:
				rc.Set(key("k"), []any{"a", 1, rng.IntN(2)}[rng.IntN(3)])
			case 5:
				rc.delete(key("k"))
			case 6:
				rc.Apply(map[string]any{key("k"): "a", key("k"): map[string]any{"deep": rng.IntN(2)}})
			case 7:
				st.Completed = append(st.Completed, key("n"))
				switch rng.IntN(3) {
				case 0: // as the engine mirrors it
					rc.Set(completedNodesKey, slices.Clip(st.Completed))
				case 1: // as a replayed state holds it
					rc.Set(completedNodesKey, slices.Clone(st.Completed))
				}
			case 8:
				st.recordGoalGate(key("n"), []Status{StatusSuccess, StatusFail}[rng.IntN(2)])
			case 9:
				st.resetLoopState()
				st.Restarts++
			case 10:
				st.NextNode, st.CurrentNode = key("n"), key("n")
				got, want := st.delta(), DiffState(was, st)
				st.track()
				st.changes.was = nil
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				if string(g) != string(w) {
					t.Fatalf("seed %d step %d: delta\n got  %s\n want %s", seed, step, g, w)
				}
				was = st.clone()
			}
		}
	}
}

// TestCheckStateDeltasCatchesAnUnnotedWrite: a write that bypasses the
// State's methods makes the next delta panic while the tests check them,
// so a new write the notes miss cannot go unseen.
func TestCheckStateDeltasCatchesAnUnnotedWrite(t *testing.T) {
	st := newState("run")
	st.track()
	st.Outcomes["sneaky"] = Outcome{Status: StatusSuccess}
	defer func() {
		msg, _ := recover().(string)
		if !strings.Contains(msg, "differs from DiffState") || !strings.Contains(msg, "sneaky") {
			t.Errorf("recovered %q, want a panic naming the unnoted key", msg)
		}
	}()
	st.delta()
	t.Error("delta did not panic on an outcome written without setOutcome")
}

// BenchmarkStateDelta times the state work of one checkpoint after 10 and
// after 200 nodes: the node's writes and the delta, as the engine does
// it, against a clone of the whole state and DiffState (how it did it
// before). A node late in a long run must cost what an early one does.
//
//	go test -run '^$' -bench StateDelta ./attractor/
func BenchmarkStateDelta(b *testing.B) {
	check := checkStateDeltas
	checkStateDeltas = false
	b.Cleanup(func() { checkStateDeltas = check })
	for _, n := range []int{10, 200} {
		st := newState("run")
		rc := &Context{m: st.Context, changing: st.noteContext}
		node := func(id string) {
			st.setVisits(id, st.Visits[id]+1)
			st.Completed = append(st.Completed, id)
			st.setOutcome(id, Outcome{Status: StatusSuccess, Meta: map[string]any{"exit_code": 0}})
			st.setRetries(id, 0)
			rc.Set("internal.retry_count."+id, 0)
			rc.Set("outcome", "success")
			rc.Set("last_stage", id)
			rc.Set(completedNodesKey, slices.Clip(st.Completed))
		}
		for i := range n {
			node(fmt.Sprintf("n%d", i))
		}
		// Each round's node is "last", taken off the completed list again
		// after the round so the state stays n nodes long.
		b.Run(fmt.Sprintf("noted/nodes=%d", n), func(b *testing.B) {
			st.track()
			for b.Loop() {
				node("last")
				_ = st.delta()
				st.track()
				st.Completed, st.changes.completed = st.Completed[:n], n
			}
		})
		b.Run(fmt.Sprintf("clone-diff/nodes=%d", n), func(b *testing.B) {
			st.changes = nil
			prev := st.clone()
			for b.Loop() {
				node("last")
				_ = DiffState(prev, st.clone())
				st.Completed = st.Completed[:n]
			}
		})
	}
}
