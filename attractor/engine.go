package attractor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// The engine.
//
// Run walks a pipeline from its start node: execute the node (with its
// retry policy), record the outcome, apply its context updates, pick the
// next node, checkpoint through the Host, report each step to the
// Listener, and repeat until an exit node passes its goal gates or the run
// stops. One goroutine — the caller's — owns the run state. Parallel
// branches, each with its own context copy, run on it one after another,
// or, when the Host is a BranchHost, at once on goroutines of their own
// that report back to it (branch_fanout.go).
//
// Run returns an error only when it cannot start (bad configuration, no
// start node). Everything that happens while running — a failed node, a
// failed checkpoint, cancellation — ends the run with a RunResult whose
// Status is fail and whose FailureReason says why.

// RunConfig is what a run needs from its host. With a BranchHost,
// Handlers, Agent, Interviewer, Sleep and Rand may be called from several
// parallel branches at once, so they must be safe for concurrent use.
type RunConfig struct {
	RunID     string
	Workspace string // the worktree processes run in
	RunDir    string // stage directories go to RunDir/<node-id>/
	Host      Host   // required: processes and checkpoints
	Listener  Listener
	// NodeWorkspace is where the processes see the worktree when that is
	// not Workspace (a jail's fixed path); paths they print under it are
	// the worktree's. Empty: Workspace.
	NodeWorkspace string
	// Agent runs codergen (box) nodes; nil means none configured.
	Agent Agent
	// Usage meters the run's agent usage against its budget; every agent
	// attempt gets it (AgentRequest.Usage). Nil: not metered.
	Usage       *UsageMeter
	Interviewer Interviewer
	// Handlers adds or replaces handlers by type string (a node's type=,
	// else its kind).
	Handlers map[string]Handler
	Logger   *slog.Logger
	// Sleep waits between retries and status-file re-reads; tests inject
	// one that returns at once. Nil waits on a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Rand returns a number in [0,1) for backoff jitter; nil uses
	// math/rand/v2.
	Rand func() float64
}

// RunResult is how a run ended.
type RunResult struct {
	RunID string
	// Status is success, fail, or partial_success: the run got to an exit
	// while nodes in Tolerated had failed and no edge handled it, because
	// a parallel node's join rules tolerated it (allow_partial,
	// first_success).
	Status        Status
	Tolerated     []string
	FailureReason string
	FailureClass  FailureClass
	// FailedNode is the node the failure is attributed to, if any.
	FailedNode string
	Completed  []string
	Outcomes   map[string]Outcome
	Context    map[string]any
	State      *State
	Duration   time.Duration
}

// ErrRunFinished is returned by Resume for a state whose run already ended.
var ErrRunFinished = errors.New("run already finished")

// Run executes p from its start node.
func Run(ctx context.Context, p *Pipeline, cfg RunConfig) (*RunResult, error) {
	start, err := startNode(p)
	if err != nil {
		return nil, err
	}
	r, err := newRun(p, cfg, newState(cfg.RunID))
	if err != nil {
		return nil, err
	}
	r.seedContext()
	r.st.NextNode = start.ID
	return r.loop(ctx), nil
}

// Resume continues a run from a state a checkpoint recorded; completed
// nodes are not executed again.
func Resume(ctx context.Context, p *Pipeline, cfg RunConfig, state *State) (*RunResult, error) {
	if state == nil {
		return nil, errors.New("resume: no state")
	}
	if state.Finished {
		return nil, fmt.Errorf("resume run %s: %w", state.RunID, ErrRunFinished)
	}
	if p.Node(state.NextNode) == nil {
		return nil, fmt.Errorf("resume run %s: next node %q is not in the pipeline", state.RunID, state.NextNode)
	}
	st := state.clone()
	st.ensureMaps()
	if cfg.RunID == "" {
		cfg.RunID = st.RunID
	}
	st.RunID = cfg.RunID
	r, err := newRun(p, cfg, st)
	if err != nil {
		return nil, err
	}
	return r.loop(ctx), nil
}

// startNode finds the single start node.
func startNode(p *Pipeline) (*Node, error) {
	if p == nil {
		return nil, errors.New("run: no pipeline")
	}
	var found *Node
	for _, n := range p.Nodes {
		if n.Kind != KindStart {
			continue
		}
		if found != nil {
			return nil, fmt.Errorf("run %s: two start nodes, %s and %s", p.Name, found.ID, n.ID)
		}
		found = n
	}
	if found == nil {
		return nil, fmt.Errorf("run %s: no start node (shape=Mdiamond)", p.Name)
	}
	return found, nil
}
