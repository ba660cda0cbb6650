package checks

import (
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// Prior is what a run did before it was resumed: the nodes an interrupted
// run finished up to the checkpoint it resumes from, as the host read them
// back from the run's records. The resumed engine reports only what it
// runs from that checkpoint on; without Prior the earlier nodes would show
// as done but with no attempts, durations or checkpoints.
type Prior struct {
	Nodes []PriorNode // in the order they first ran
	Edges []PriorEdge // the transitions taken, in order
}

// PriorNode is one node as it stood at the checkpoint.
type PriorNode struct {
	ID       string
	Visits   int
	Attempts int           // all attempts of all visits
	Duration time.Duration // summed over attempts
	// Outcome is the last visit's outcome; it decides the node's state.
	Outcome       attractor.Outcome
	CheckpointSHA string
	Dir           string // stage directory of the latest attempt; "" if unknown
	// Usage sums its agent attempts' usage.
	Usage attractor.UsageTotal
}

// PriorEdge is one transition the run took.
type PriorEdge struct {
	From, To string
	Method   attractor.EdgeMethod
}

// Seed records what the run did before it was resumed, as if the Recorder
// had heard it. Call it before the resumed engine's first event: a node
// in prior is set to what prior says, not added to.
func (r *Recorder) Seed(prior Prior) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range prior.Nodes {
		n := r.node(nil, p.ID)
		r.view.markStarted(n)
		n.Visits, n.Attempts, n.Duration = p.Visits, p.Attempts, p.Duration
		n.Outcome, n.HasOutcome = cloneOutcome(p.Outcome), true
		n.State, n.SkipReason = finalState(p.Outcome)
		n.CheckpointSHA, n.Dir = p.CheckpointSHA, p.Dir
		r.view.seedUsage(n, p.Usage)
	}
	for _, e := range prior.Edges {
		// The records keep the rule that chose a transition, not the edge:
		// parallel edges between two nodes all count on the first.
		var method attractor.EdgeMethod
		if followsNoEdge(e.Method) {
			method = e.Method
		}
		r.take(e.From, e.To, method, nil)
	}
	// The run was under way when it was interrupted, and its summary check
	// said so; queued again would be wrong.
	if len(prior.Nodes) > 0 && r.view.Status == RunPending {
		r.view.Status = RunRunning
	}
}

// followsNoEdge reports whether the engine makes transitions chosen by m
// without an edge (EdgeSelected.Edge nil): those are the jumps.
func followsNoEdge(m attractor.EdgeMethod) bool {
	switch m {
	case attractor.ByRetryTarget, attractor.ByGoalGate, attractor.ByFanIn:
		return true
	}
	return false
}

// Seed gives the checks what the run did before it was resumed (see
// Recorder.Seed). Call it before Adopt, so that the checks Adopt creates
// or updates show it from the start.
func (p *Publisher) Seed(prior Prior) {
	p.rec.Seed(prior)
	p.rerender()
}
