package attractor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// A run's State keeps note of what it was before each key written since
// the last checkpoint, so that the checkpoint's StateDelta comes from
// those keys alone. Finding it by cloning the whole State at every
// checkpoint and diffing the clone against the one before cost more the
// longer the run, each map having an entry per node run so far: 4.6 µs
// at node 10 and 43-47 µs at node 200, where the noted delta takes
// 2.4-2.5 µs at both (BenchmarkStateDelta).
//
// DiffState stays the definition of a delta. Every write to a tracked
// State's maps and goal gates goes through the methods below (Completed
// only grows by appends, which track's length covers), and the engine's
// tests check each checkpoint's delta against DiffState of snapshots
// (checkStateDeltas).

// stateChanges holds what a State was, key by key, when track was called.
type stateChanges struct {
	completed                   int // len(Completed) at track
	outcomes                    map[string]prior[Outcome]
	context                     map[string]prior[any]
	retries, visits, signatures map[string]prior[int]
	gates                       *[]GoalGateResult // GoalGates at track, once changed since
	// was is a snapshot at track, kept when checkStateDeltas.
	was *State
}

// checkStateDeltas makes every delta check itself against DiffState of a
// snapshot taken at track, and panic when they differ. The package's
// tests set it; it costs a clone per checkpoint.
var checkStateDeltas bool

// prior is a map entry as it was at track; ok false: absent.
type prior[V any] struct {
	v  V
	ok bool
}

// track starts (or starts anew) noting changes: delta then holds what
// changes from here on.
func (s *State) track() {
	ch := &stateChanges{completed: len(s.Completed)}
	if checkStateDeltas {
		ch.was = s.clone()
	}
	s.changes = ch
}

// notePrior keeps m[k]'s value the first time k is written since track.
func notePrior[V any](priors *map[string]prior[V], m map[string]V, k string) {
	if _, seen := (*priors)[k]; seen {
		return
	}
	if *priors == nil {
		*priors = map[string]prior[V]{}
	}
	v, ok := m[k]
	(*priors)[k] = prior[V]{v: v, ok: ok}
}

func (s *State) setOutcome(id string, o Outcome) {
	if s.changes != nil {
		notePrior(&s.changes.outcomes, s.Outcomes, id)
	}
	s.Outcomes[id] = o
}

func (s *State) setRetries(id string, n int) {
	if s.changes != nil {
		notePrior(&s.changes.retries, s.Retries, id)
	}
	s.Retries[id] = n
}

func (s *State) setVisits(id string, n int) {
	if s.changes != nil {
		notePrior(&s.changes.visits, s.Visits, id)
	}
	s.Visits[id] = n
}

func (s *State) addSignature(key string, n int) {
	if s.changes != nil {
		notePrior(&s.changes.signatures, s.Signatures, key)
	}
	s.Signatures[key] += n
}

// noteContext is the hook of the run's Context, called before key is set
// or deleted.
func (s *State) noteContext(key string) {
	if s.changes != nil {
		notePrior(&s.changes.context, s.Context, key)
	}
}

func (s *State) noteGoalGates() {
	if s.changes != nil && s.changes.gates == nil {
		gates := slices.Clone(s.GoalGates)
		s.changes.gates = &gates
	}
}

// resetLoopState empties the retry and visit counters and the goal gates
// (a loop restart).
func (s *State) resetLoopState() {
	if s.changes != nil {
		for k := range s.Retries {
			notePrior(&s.changes.retries, s.Retries, k)
		}
		for k := range s.Visits {
			notePrior(&s.changes.visits, s.Visits, k)
		}
	}
	clear(s.Retries)
	clear(s.Visits)
	s.noteGoalGates()
	s.GoalGates = nil
}

// delta returns what changed since track: what DiffState gives for a
// snapshot taken then and the State now, found from the keys written in
// between. The caller calls track again once the delta is kept (a
// checkpoint the host failed leaves its changes for the next delta).
func (s *State) delta() StateDelta {
	ch := s.changes
	d := StateDelta{
		CurrentNode: s.CurrentNode, NextNode: s.NextNode, Restarts: s.Restarts,
		Finished: s.Finished, RunID: s.RunID,
		Completed: slices.Clone(s.Completed[ch.completed:]),
	}
	d.Outcomes = changedKeys(ch.outcomes, s.Outcomes, "", sameOutcome)
	skip := ""
	if v, ok := s.Context[completedNodesKey]; ok && mirrorsCompleted(v, s.Completed) {
		skip, d.CompletedMirror = completedNodesKey, true
	}
	d.Context = changedKeys(ch.context, s.Context, skip, sameValue)
	d.Retries = changedKeys(ch.retries, s.Retries, "", sameInt)
	d.Visits = changedKeys(ch.visits, s.Visits, "", sameInt)
	d.Signatures = changedKeys(ch.signatures, s.Signatures, "", sameInt)
	if ch.gates != nil && !slices.Equal(*ch.gates, s.GoalGates) {
		d.GoalGates, d.GoalGatesSet = slices.Clone(s.GoalGates), true
	}
	if ch.was != nil {
		mustEqualDelta(d, DiffState(ch.was, s))
	}
	return d
}

// mustEqualDelta panics unless the deltas encode alike.
func mustEqualDelta(got, want StateDelta) {
	g, gerr := json.Marshal(got)
	w, werr := json.Marshal(want)
	if gerr != nil || werr != nil || !bytes.Equal(g, w) {
		panic(fmt.Sprintf("state delta from noted changes differs from DiffState:\n got  %s (%v)\n want %s (%v)", g, gerr, w, werr))
	}
}

// changedKeys is diffMap over the keys written since track:
// those m holds with another value than before (or newly), and those it
// no longer holds, except skip; nil when there are none.
func changedKeys[V any](priors map[string]prior[V], m map[string]V, skip string, same func(a, b V) bool) *mapDelta[V] {
	var d mapDelta[V]
	for k, p := range priors {
		if k == skip && skip != "" {
			continue
		}
		v, ok := m[k]
		switch {
		case !ok && p.ok:
			d.Del = append(d.Del, k)
		case ok && (!p.ok || !same(p.v, v)):
			d.set(k, v)
		}
	}
	return d.orNil()
}
