package attractor

import (
	"context"
	"time"
)

// Host is what the engine needs from its environment: starting processes
// and checkpointing. Package runner implements it over runner/sandbox and
// git; tests use a small fake.
type Host interface {
	// Exec runs one process and waits for it. A non-zero exit, a timeout
	// and a cancellation are results, not errors; the error reports that
	// the process could not be started.
	Exec(ctx context.Context, req ExecRequest) (ExecResult, error)
	// Checkpoint records the run after an executed node (a commit on the
	// run branch) and returns the commit SHA. An error fails the run.
	Checkpoint(ctx context.Context, req CheckpointRequest) (string, error)
}

// Prewarmer is a Host that can make a process ready ahead of need: while
// it checkpoints a node, the engine hands it the request the next node's
// first process will make, when it can know it (a built-in tool or verify
// node's command). An Exec of an equal request may then start faster;
// anything else is unaffected. Prewarm must return at once, and is
// called only when no process of the run is running on that lane.
type Prewarmer interface {
	Prewarm(req ExecRequest)
}

// ExecRequest describes one process a stage starts.
type ExecRequest struct {
	Argv []string // e.g. bash -c <command>
	Dir  string   // working directory (the workspace)
	// StageEnv holds the KILROY_* stage variables; the host adds them to
	// the environment it builds for every node kind.
	StageEnv   map[string]string
	Timeout    time.Duration // 0 = none
	StdoutPath string        // file the host writes stdout to
	StderrPath string        // file the host writes stderr to
	// MaxLogBytes caps each log file; past it the host keeps the tail.
	MaxLogBytes int64
	// TailBytes is how much of the end of each stream to return.
	TailBytes int
}

// ExecResult is what happened to a process.
type ExecResult struct {
	ExitCode   int // -1 when killed or not started
	TimedOut   bool
	Canceled   bool
	Duration   time.Duration
	StdoutTail string
	StderrTail string
	// LimitHit names the sandbox limit the process most likely reached
	// when it failed (processes, memory, file size, CPU time), or "".
	LimitHit string
	// Environment, when set, says the process failed for want of
	// something its execution environment should provide (a command the
	// run's image lacks), not for the change under test: the node fails
	// structural with this as its reason.
	Environment string
}

// CheckpointRequest is handed to Host.Checkpoint after every executed node.
type CheckpointRequest struct {
	RunID  string
	Node   *Node
	Status Status
	// Delta is what the node changed in the run's state since the
	// checkpoint before (since the state Resume was given, for a resumed
	// run's first): applied in order to an empty State, the deltas give
	// the state the run resumes from, at its NextNode. Its size is that of
	// the node's changes, not of the run so far.
	Delta StateDelta
	state *State
}

// State returns a copy of the run's whole state at this checkpoint, for
// a host to keep. Call it before Checkpoint returns: the run goes on
// changing the state after. It costs a copy of the whole state, which
// grows with the run; Delta does not.
func (req CheckpointRequest) State() *State { return req.state.clone() }

// StageScrubber is an optional Host capability: after every attempt, once
// the engine has written its own files to the stage directory
// (status.json, invocation.json) beside the process's logs and whatever
// the node wrote there, the host rids the directory of what it must not
// keep, such as a secret in a log. It reports its own failures.
type StageScrubber interface {
	ScrubStage(ctx context.Context, dir string)
}

// ArtifactChecker is an optional Host capability behind verify.artifacts
// nodes: it checks the files the run changed against the artifact policy.
// A host without it fails such nodes, saying what is missing.
type ArtifactChecker interface {
	CheckArtifacts(ctx context.Context, req ArtifactCheckRequest) (Outcome, error)
}

// ArtifactCheckRequest asks for the artifact policy check of one node.
type ArtifactCheckRequest struct {
	RunID     string
	Node      *Node
	Workspace string
	StageDir  string
}

// CheckpointRefusedError is a Host's refusal to commit what a node left,
// such as a file holding a secret: the run stops at that node with a
// deterministic failure and Reason, and nothing of the node is committed.
type CheckpointRefusedError struct {
	Reason string
}

func (e *CheckpointRefusedError) Error() string { return "checkpoint refused: " + e.Reason }
