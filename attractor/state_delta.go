package attractor

import (
	"maps"
	"slices"
)

// StateDelta is what one checkpoint changed in a State, so a host can
// persist a run's state by appending one small record per node instead of
// rewriting the whole State: its size is that of the node's own changes
// (its outcome, the context keys it set, the counters it moved), not of
// the run so far. Applying the deltas of every checkpoint in order to an
// empty State gives the State of the last one, up to the JSON round trip
// every persisted State goes through.
type StateDelta struct {
	CurrentNode string `json:"current_node,omitempty"`
	NextNode    string `json:"next_node,omitempty"`
	// Completed are the nodes appended to State.Completed; with
	// CompletedReset they replace it (never the case in a run: the list
	// only grows).
	Completed      []string           `json:"completed,omitempty"`
	CompletedReset bool               `json:"completed_reset,omitempty"`
	Outcomes       *mapDelta[Outcome] `json:"outcomes,omitempty"`
	Context        *mapDelta[any]     `json:"context,omitempty"`
	// CompletedMirror says the context's completed_nodes key is the
	// completed list again (record sets it after every node): the key is
	// not sent, or every delta would carry the whole list.
	CompletedMirror bool             `json:"completed_mirror,omitempty"`
	Retries         *mapDelta[int]   `json:"retries,omitempty"`
	Visits          *mapDelta[int]   `json:"visits,omitempty"`
	Signatures      *mapDelta[int]   `json:"signatures,omitempty"`
	GoalGates       []GoalGateResult `json:"goal_gates,omitempty"`
	GoalGatesSet    bool             `json:"goal_gates_set,omitempty"`
	Restarts        int              `json:"loop_restarts,omitempty"`
	Finished        bool             `json:"finished,omitempty"`
	RunID           string           `json:"run_id,omitempty"`
}

// mapDelta is the change of one map: keys set (added or changed) and keys
// deleted.
type mapDelta[V any] struct {
	Set map[string]V `json:"set,omitempty"`
	Del []string     `json:"del,omitempty"`
}

// completedNodesKey is the context key record mirrors State.Completed in.
const completedNodesKey = "completed_nodes"

// DiffState returns what changed from prev to next; prev nil is the empty
// State, so the first checkpoint's delta holds everything. Values are
// compared with reflect.DeepEqual, which is cheap here: context values and
// outcomes are replaced, never mutated, so an unchanged one is the same
// value in both snapshots.
func DiffState(prev, next *State) StateDelta {
	if prev == nil {
		prev = &State{}
	}
	d := StateDelta{
		CurrentNode: next.CurrentNode, NextNode: next.NextNode, Restarts: next.Restarts,
		Finished: next.Finished, RunID: next.RunID,
	}
	if len(prev.Completed) <= len(next.Completed) && slices.Equal(prev.Completed, next.Completed[:len(prev.Completed)]) {
		d.Completed = slices.Clone(next.Completed[len(prev.Completed):])
	} else {
		d.Completed, d.CompletedReset = slices.Clone(next.Completed), true
	}
	d.Outcomes = diffMap(prev.Outcomes, next.Outcomes, "", sameOutcome)
	d.Context, d.CompletedMirror = diffContext(prev, next)
	d.Retries = diffMap(prev.Retries, next.Retries, "", sameInt)
	d.Visits = diffMap(prev.Visits, next.Visits, "", sameInt)
	d.Signatures = diffMap(prev.Signatures, next.Signatures, "", sameInt)
	if !slices.Equal(prev.GoalGates, next.GoalGates) {
		d.GoalGates, d.GoalGatesSet = slices.Clone(next.GoalGates), true
	}
	return d
}

// diffContext diffs the contexts, leaving out completed_nodes when next's
// mirrors its completed list (mirror): Apply sets it from the list.
func diffContext(prev, next *State) (d *mapDelta[any], mirror bool) {
	v, ok := next.Context[completedNodesKey]
	mirror = ok && mirrorsCompleted(v, next.Completed)
	if !mirror {
		return diffMap(prev.Context, next.Context, "", sameValue), false
	}
	return diffMap(prev.Context, next.Context, completedNodesKey, sameValue), true
}

// mirrorsCompleted reports whether v, a completed_nodes context value, is
// the list completed (as the engine sets it, or after a JSON round trip).
func mirrorsCompleted(v any, completed []string) bool {
	switch x := v.(type) {
	case []string:
		return sameSlice(x, completed) || slices.Equal(x, completed)
	case []any:
		if len(x) != len(completed) {
			return false
		}
		for i, e := range x {
			if s, ok := e.(string); !ok || s != completed[i] {
				return false
			}
		}
		return true
	}
	return false
}

// Apply changes s by d: the State after the checkpoint d was taken at,
// given the State of the one before.
func (s *State) Apply(d StateDelta) {
	s.ensureMaps()
	s.RunID, s.CurrentNode, s.NextNode = d.RunID, d.CurrentNode, d.NextNode
	s.Restarts, s.Finished = d.Restarts, d.Finished
	if d.CompletedReset {
		s.Completed = slices.Clone(d.Completed)
	} else {
		s.Completed = append(s.Completed, d.Completed...)
	}
	d.Outcomes.apply(s.Outcomes)
	d.Context.apply(s.Context)
	if d.CompletedMirror {
		s.Context[completedNodesKey] = slices.Clone(s.Completed)
	}
	d.Retries.apply(s.Retries)
	d.Visits.apply(s.Visits)
	d.Signatures.apply(s.Signatures)
	if d.GoalGatesSet {
		s.GoalGates = slices.Clone(d.GoalGates)
	}
}

// diffMap returns the keys of next that prev lacks or holds another value
// for, and the keys only prev has, except skip; nil when the maps are
// equal.
func diffMap[V any](prev, next map[string]V, skip string, same func(a, b V) bool) *mapDelta[V] {
	var d mapDelta[V]
	// kept counts prev's keys that next still has (skip counts as kept),
	// so that the search for deleted keys runs only when there are some.
	kept := 0
	if _, ok := prev[skip]; ok && skip != "" {
		kept++
	}
	for k, v := range next {
		if k == skip && skip != "" {
			continue
		}
		pv, ok := prev[k]
		if ok {
			kept++
			if same(pv, v) {
				continue
			}
		}
		d.set(k, v)
	}
	if kept < len(prev) {
		for k := range prev {
			if _, ok := next[k]; !ok && (k != skip || skip == "") {
				d.Del = append(d.Del, k)
			}
		}
	}
	return d.orNil()
}

func (d *mapDelta[V]) set(k string, v V) {
	if d.Set == nil {
		d.Set = map[string]V{}
	}
	d.Set[k] = v
}

// orNil is d with its deletions sorted, or nil when it changes nothing.
func (d *mapDelta[V]) orNil() *mapDelta[V] {
	if d.Set == nil && d.Del == nil {
		return nil
	}
	slices.Sort(d.Del)
	return d
}

func (d *mapDelta[V]) apply(m map[string]V) {
	if d == nil {
		return
	}
	for _, k := range d.Del {
		delete(m, k)
	}
	maps.Copy(m, d.Set)
}
