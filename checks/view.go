package checks

import (
	"maps"
	"slices"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/attractor/findings"
)

// State is where a node stands in a run, as a reader of the check sees it.
type State string

const (
	StatePending   State = "pending"   // not reached yet
	StateRunning   State = "running"   // an attempt is under way
	StateRetrying  State = "retrying"  // an attempt failed and another follows
	StateSuccess   State = "success"   // succeeded
	StatePartial   State = "partial"   // partial_success
	StateFailed    State = "failed"    // failed for good
	StateSkipped   State = "skipped"   // never ran, or its handler skipped it; see SkipReason
	StateCancelled State = "cancelled" // stopped by a cancellation
)

// RunStatus is where the run as a whole stands.
type RunStatus string

const (
	RunPending RunStatus = "pending"
	RunRunning RunStatus = "running"
	RunSuccess RunStatus = "success"
	// RunPartial is a run that reached an exit while failures its
	// pipeline tolerated (allow_partial, first_success) stood unhandled:
	// never reported as a success.
	RunPartial   RunStatus = "partial"
	RunFailed    RunStatus = "failed"
	RunCancelled RunStatus = "cancelled"
)

// RunView is a snapshot of one run, everything the renderers need.
type RunView struct {
	Pipeline string // the pipeline's name in check names: kilroy/<Pipeline>
	RunID    string
	HeadSHA  string
	Goal     string
	// Notes are the host's remarks on the run (RunInfo.Notes).
	Notes []string
	// Image and ImageDigest: RunInfo's.
	Image, ImageDigest string

	Status       RunStatus
	Reason       string // why the run failed or was cancelled
	FailureClass attractor.FailureClass
	FailedNode   string // the node the failure is attributed to, if any
	// Tolerated lists the nodes of a partial run whose failure stood.
	Tolerated []string
	// PushError says why the run branch could not be pushed at the end:
	// the checkpoint commits the checks link to are not on GitHub, so the
	// run cannot count as a success, whatever its nodes did.
	PushError string
	Duration  time.Duration

	Nodes []NodeView // declaration order
	Edges []EdgeView // the graph's edges, then jumps that follow no edge

	// Usage sums the agent attempts' usage (usage.go); BudgetLimited says
	// an agent budget stopped one.
	Usage         attractor.UsageTotal
	BudgetLimited bool
}

// NodeView is one node of a run.
type NodeView struct {
	ID    string
	Label string
	Kind  attractor.Kind
	// Command is what a verify or tool node runs, shown in its check and
	// used to name the tool in annotation titles.
	Command string
	// Verify says the node gets its own check run: verify and
	// verify.artifacts nodes, and nodes whose success verify_command
	// re-checks.
	Verify bool

	State    State
	Visits   int
	Attempts int           // all attempts of all visits
	Duration time.Duration // summed over attempts
	// Outcome is the latest attempt's outcome; HasOutcome says there was one.
	Outcome    attractor.Outcome
	HasOutcome bool
	// SkipReason says why a skipped or cancelled node did not run to the end.
	SkipReason    string
	CheckpointSHA string
	Dir           string // stage directory of the latest attempt
	// Started is the node's place in the order nodes first started (1 for
	// the first); 0 for a node that never started. Tables use it.
	Started int
	// Usage sums the node's agent attempts' usage.
	Usage attractor.UsageTotal
}

// Findings returns the latest outcome's findings.
func (n *NodeView) Findings() []findings.Finding { return n.Outcome.Findings }

// EdgeView is one edge of the graph, or a jump the engine made without
// one (a retry target, a goal gate, a fan-in).
type EdgeView struct {
	From, To  string
	Label     string
	Condition string
	Jump      attractor.EdgeMethod // set for jumps only
	Taken     int                  // how many times the run followed it
}

// Node returns the node with the given ID, or nil.
func (v *RunView) Node(id string) *NodeView {
	for i := range v.Nodes {
		if v.Nodes[i].ID == id {
			return &v.Nodes[i]
		}
	}
	return nil
}

// Finished reports whether the run has ended.
func (v *RunView) Finished() bool {
	switch v.Status {
	case RunSuccess, RunPartial, RunFailed, RunCancelled:
		return true
	}
	return false
}

// clone returns a copy that shares nothing mutable with v, so a snapshot
// stays put while the recorder keeps listening.
func (v *RunView) clone() *RunView {
	c := *v
	c.Nodes = slices.Clone(v.Nodes)
	for i := range c.Nodes {
		c.Nodes[i].Outcome = cloneOutcome(c.Nodes[i].Outcome)
	}
	c.Edges = slices.Clone(v.Edges)
	c.Notes = slices.Clone(v.Notes)
	c.Tolerated = slices.Clone(v.Tolerated)
	return &c
}

// cloneOutcome copies the parts of an outcome the renderers read. Details
// values are shared: nothing here modifies them.
func cloneOutcome(o attractor.Outcome) attractor.Outcome {
	o.Findings = slices.Clone(o.Findings)
	o.Details = maps.Clone(o.Details)
	o.Meta = maps.Clone(o.Meta)
	return o
}

// isVerifyNode mirrors the engine's rule for which nodes carry a verify
// step: verify kinds always, and verify_command only on the kinds whose
// success it re-checks.
func isVerifyNode(n *attractor.Node) bool {
	switch n.Kind {
	case attractor.KindVerify, attractor.KindVerifyArtifacts:
		return true
	case attractor.KindCodergen, attractor.KindConditional, attractor.KindFanIn, attractor.KindExit:
		return n.VerifyCommand != ""
	}
	return false
}

// nodeCommand is the command a node runs, for display.
func nodeCommand(n *attractor.Node) string {
	switch {
	case n.Command != "":
		return n.Command
	case n.VerifyCommand != "":
		return n.VerifyCommand
	}
	return n.ToolCommand
}
