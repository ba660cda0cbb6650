package attractor

import (
	"maps"
	"slices"
)

// State is everything needed to continue a run: the host receives it with
// every checkpoint and persists it (checkpoint.json); Resume takes it back.
type State struct {
	RunID string `json:"run_id"`
	// CurrentNode is the last executed node; NextNode is where the run
	// continues ("" once Finished).
	CurrentNode string `json:"current_node,omitempty"`
	NextNode    string `json:"next_node,omitempty"`
	// Completed lists executed nodes in order, repeats included.
	Completed []string `json:"completed_nodes"`
	// Outcomes holds each node's latest outcome.
	Outcomes map[string]Outcome `json:"node_outcomes"`
	Context  map[string]any     `json:"context"`
	// Retries counts retries of the node's current visit.
	Retries map[string]int `json:"retry_counts"`
	Visits  map[string]int `json:"visit_counts"`
	// Signatures counts failures per node|class|signature.
	Signatures map[string]int `json:"signature_counts"`
	// GoalGates lists goal-gate nodes in first-completion order with their
	// latest status.
	GoalGates []GoalGateResult `json:"goal_gates,omitempty"`
	Restarts  int              `json:"loop_restarts,omitempty"`
	Finished  bool             `json:"finished,omitempty"`

	// changes, when set, notes the writes since the last track
	// (state_changes.go); a clone starts without.
	changes *stateChanges
}

// GoalGateResult is a goal-gate node's latest status.
type GoalGateResult struct {
	Node   string `json:"node"`
	Status Status `json:"status"`
}

func newState(runID string) *State {
	return &State{
		RunID:      runID,
		Outcomes:   map[string]Outcome{},
		Context:    map[string]any{},
		Retries:    map[string]int{},
		Visits:     map[string]int{},
		Signatures: map[string]int{},
	}
}

// clone returns a copy safe to hand to the host while the run goes on.
// Context values and outcomes are never mutated in place, so copying the
// containers is enough.
func (s *State) clone() *State {
	c := *s
	c.Completed = slices.Clone(s.Completed)
	c.Outcomes = maps.Clone(s.Outcomes)
	c.Context = maps.Clone(s.Context)
	c.Retries = maps.Clone(s.Retries)
	c.Visits = maps.Clone(s.Visits)
	c.Signatures = maps.Clone(s.Signatures)
	c.GoalGates = slices.Clone(s.GoalGates)
	c.changes = nil
	return &c
}

// ensureMaps makes a decoded state usable even when fields were omitted.
func (s *State) ensureMaps() {
	if s.Outcomes == nil {
		s.Outcomes = map[string]Outcome{}
	}
	if s.Context == nil {
		s.Context = map[string]any{}
	}
	if s.Retries == nil {
		s.Retries = map[string]int{}
	}
	if s.Visits == nil {
		s.Visits = map[string]int{}
	}
	if s.Signatures == nil {
		s.Signatures = map[string]int{}
	}
}

// recordGoalGate keeps the gate list in first-completion order.
func (s *State) recordGoalGate(node string, st Status) {
	s.noteGoalGates()
	for i := range s.GoalGates {
		if s.GoalGates[i].Node == node {
			s.GoalGates[i].Status = st
			return
		}
	}
	s.GoalGates = append(s.GoalGates, GoalGateResult{Node: node, Status: st})
}

// unsatisfiedGate returns the first goal gate, in completion order, whose
// latest outcome is not a success (a custom outcome counts as one).
func (s *State) unsatisfiedGate() (GoalGateResult, bool) {
	for _, g := range s.GoalGates {
		if !g.Status.Succeeded() {
			return g, true
		}
	}
	return GoalGateResult{}, false
}
