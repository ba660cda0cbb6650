package attractor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
)

// Agent runs a coding agent for a codergen (box) node. Package runner/agent
// implements it (CLI agents and the API agent loop). The agent works in
// the workspace, may write the stage status file, and returns its verdict.
type Agent interface {
	Run(ctx context.Context, req AgentRequest) (Outcome, error)
}

// AgentRequest is one codergen attempt.
type AgentRequest struct {
	RunID     string
	Node      *Node
	Prompt    string // expanded; also written to prompt.md
	Workspace string
	StageDir  string
	StageEnv  map[string]string // KILROY_* variables for agent processes
	Context   *Context          // run context, read only
	Attempt   int
	// Usage is the run's usage meter: the agent spends into it as its
	// backend reports usage and stops before a step that would pass the
	// budget. Nil: not metered.
	Usage *UsageMeter
}

// codergenHandler writes the prompt, runs the agent and writes its
// response. The engine applies the status file and verify_command after.
func codergenHandler(ctx context.Context, s *Stage) (Outcome, error) {
	prompt := expandPrompt(s)
	if err := os.WriteFile(filepath.Join(s.Dir, "prompt.md"), []byte(prompt), 0o644); err != nil {
		return Outcome{}, fmt.Errorf("write prompt.md: %w", err)
	}
	if s.Agent == nil {
		return failOutcome(ClassStructural, fmt.Sprintf(
			"node %s needs a coding agent and none is configured: set agents in the kilroy-bot config, "+
				"or give the node shape=parallelogram with tool_command if it runs a command", s.Node.ID)), nil
	}
	actx, cancel := nodeContext(ctx, s.Node.Timeout)
	defer cancel()
	o, err := s.Agent.Run(actx, AgentRequest{
		RunID: s.RunID, Node: s.Node, Prompt: prompt, Workspace: s.Workspace,
		StageDir: s.Dir, StageEnv: s.Env, Context: s.Context, Attempt: s.Attempt, Usage: s.Usage,
	})
	if err != nil {
		return agentFailure(ctx, err, s.Node.Timeout), nil
	}
	if err := safefile.WriteFile(filepath.Join(s.Dir, "response.md"), []byte(o.Response)); err != nil {
		return Outcome{}, fmt.Errorf("write response.md: %w", err)
	}
	return withAgentStatus(s.Node, o), nil
}

// expandPrompt returns the node prompt (label when empty) with $goal
// replaced; Load already expands $goal, so this only matters for pipelines
// built by hand.
func expandPrompt(s *Stage) string {
	p := s.Node.Prompt
	if p == "" {
		p = s.Node.Label
	}
	return strings.ReplaceAll(p, "$goal", s.Pipeline.Goal)
}

// nodeContext bounds a handler's wait (an agent, a human) by the node's
// timeout, when it has one.
func nodeContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout > 0 {
		return context.WithTimeout(ctx, timeout)
	}
	return context.WithCancel(ctx)
}

func agentFailure(parent context.Context, err error, timeout time.Duration) Outcome {
	if errors.Is(err, context.DeadlineExceeded) && parent.Err() == nil {
		return failOutcome(ClassTransientInfra, fmt.Sprintf("agent timed out after %s (node timeout)", timeout))
	}
	return failOutcome(classifyError(err), "agent failed: "+err.Error())
}

// withAgentStatus fills an outcome the agent left without a status: with
// auto_status it is a success, otherwise a failure saying how to report
// one (a status file written by the agent still overrides it).
func withAgentStatus(n *Node, o Outcome) Outcome {
	if o.Status != "" {
		return o
	}
	if n.AutoStatus {
		o.Status = StatusSuccess
		o.Notes = joinNotes(o.Notes, "auto-status: the agent finished without reporting a status")
		return o
	}
	o.Status = StatusFail
	o.FailureClass = ClassDeterministic
	o.FailureReason = "the agent finished without reporting a status: have it write $KILROY_STAGE_STATUS_PATH, or set auto_status=true on the node"
	return o
}
