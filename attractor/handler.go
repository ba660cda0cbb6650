package attractor

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// Handler executes one attempt of a node. It reads the node, the context
// and its stage, does its work (through the Host for processes) and
// returns an Outcome; it never changes the context itself. An error means
// the attempt could not be carried out; the engine turns it into a FAIL.
//
// Handlers run on the goroutine that owns the run (or a parallel branch),
// one attempt at a time.
type Handler interface {
	Execute(ctx context.Context, s *Stage) (Outcome, error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, s *Stage) (Outcome, error)

// Execute calls f.
func (f HandlerFunc) Execute(ctx context.Context, s *Stage) (Outcome, error) { return f(ctx, s) }

// Stage is one attempt of one node: what a handler may read and the
// services it may use.
type Stage struct {
	RunID    string
	Node     *Node
	Pipeline *Pipeline
	// Context is the run context as the node starts; read only.
	Context *Context
	Visit   int
	Attempt int
	// Dir is the stage directory (status.json, logs, prompt.md, …).
	Dir       string
	Workspace string
	// NodeWorkspace is where the stage's processes see Workspace, when
	// elsewhere (RunConfig.NodeWorkspace).
	NodeWorkspace string
	// Env holds the KILROY_* variables every process of the stage gets.
	Env map[string]string
	// Predecessor is the node executed before this one ("" for the first)
	// and PredecessorOutcome its outcome.
	Predecessor        string
	PredecessorOutcome *Outcome

	Host        Host
	Agent       Agent
	Interviewer Interviewer
	Usage       *UsageMeter // the run's agent usage and budget; may be nil

	procs []processRecord
}

// Default limits for stage processes.
const (
	DefaultNodeTimeout = 10 * time.Minute
	maxLogBytes        = 64 << 20 // per stream, tail kept
	tailBytes          = 16 << 10 // returned to the engine per stream
	reasonTailBytes    = 2000     // output quoted in a failure reason
)

// timeout is the node's timeout, else the default.
func (s *Stage) timeout() time.Duration {
	if s.Node.Timeout > 0 {
		return s.Node.Timeout
	}
	return DefaultNodeTimeout
}

// Shell runs `bash -c command` in the workspace through the Host with the
// stage environment. name prefixes the log files ("" gives stdout.log and
// stderr.log, "verify" gives verify.stdout.log, …). The process is
// recorded in invocation.json.
func (s *Stage) Shell(ctx context.Context, name, command string, timeout time.Duration) (ExecResult, error) {
	req := s.shellRequest(name, command, timeout)
	if s.Host == nil {
		return ExecResult{ExitCode: -1}, fmt.Errorf("run %s command of node %s: no host configured", nameOr(name, "shell"), s.Node.ID)
	}
	res, err := s.Host.Exec(ctx, req)
	s.procs = append(s.procs, newProcessRecord(name, req, res, err))
	if err != nil {
		return res, fmt.Errorf("run %s command of node %s: %w", nameOr(name, "shell"), s.Node.ID, err)
	}
	return res, nil
}

// shellRequest is the request Shell hands the host.
func (s *Stage) shellRequest(name, command string, timeout time.Duration) ExecRequest {
	return ExecRequest{
		Argv:        []string{"bash", "-c", command},
		Dir:         s.Workspace,
		StageEnv:    s.Env,
		Timeout:     timeout,
		StdoutPath:  filepath.Join(s.Dir, logName(name, "stdout.log")),
		StderrPath:  filepath.Join(s.Dir, logName(name, "stderr.log")),
		MaxLogBytes: maxLogBytes,
		TailBytes:   tailBytes,
	}
}

func logName(prefix, base string) string {
	if prefix == "" {
		return base
	}
	return prefix + "." + base
}

func nameOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// outputTail is the end of a process's output for a failure reason:
// stdout then stderr, cut to the last reasonTailBytes.
func outputTail(r ExecResult) string {
	out := strings.TrimSpace(strings.TrimSpace(r.StdoutTail) + "\n" + strings.TrimSpace(r.StderrTail))
	if len(out) > reasonTailBytes {
		out = "…" + out[len(out)-reasonTailBytes:]
	}
	return out
}

// processFailure turns a finished process that did not succeed into a
// failed outcome: a timeout is transient infrastructure naming the limit,
// a cancellation is canceled, an exit status is deterministic and quotes
// the output tail. what names the command in the reason; a cancellation
// says why the run was canceled when its context carries a cause (a
// supersede, a run timeout), so the node's own check can say so too.
func processFailure(ctx context.Context, what string, timeout time.Duration, r ExecResult) Outcome {
	switch {
	case r.TimedOut:
		return failOutcome(ClassTransientInfra, fmt.Sprintf("%s timed out after %s (node timeout; raise it with timeout=…)", what, timeout))
	case r.Canceled:
		reason := what + " was canceled"
		if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
			reason += ": " + cause.Error()
		}
		return failOutcome(ClassCanceled, reason)
	}
	if r.Environment != "" {
		return failOutcome(ClassStructural, fmt.Sprintf("%s (%s exited with status %d)", r.Environment, what, r.ExitCode))
	}
	reason := fmt.Sprintf("%s exited with status %d", what, r.ExitCode)
	if r.ExitCode < 0 {
		reason = what + " was killed"
	}
	if r.LimitHit != "" {
		reason += ": " + r.LimitHit
	}
	if tail := outputTail(r); tail != "" {
		reason += ": " + tail
	}
	return failOutcome(ClassDeterministic, reason)
}
