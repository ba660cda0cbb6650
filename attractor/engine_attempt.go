package attractor

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime/debug"

	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
)

// Stage environment variables: the node status contract.
const (
	EnvStatusPath         = "KILROY_STAGE_STATUS_PATH"
	EnvStatusFallbackPath = "KILROY_STAGE_STATUS_FALLBACK_PATH"
	EnvLogsDir            = "KILROY_STAGE_LOGS_DIR"
	EnvRunID              = "KILROY_RUN_ID"
	EnvNodeID             = "KILROY_NODE_ID"
	EnvPredecessorNode    = "KILROY_PREDECESSOR_NODE"
	EnvPredecessorOutcome = "KILROY_PREDECESSOR_OUTCOME"
)

// attempt runs the handler once and settles the outcome: status file,
// verify_command, failure class and signature; then starts writing
// status.json and invocation.json and the host's scrub of the stage
// directory (stageFiles), which the caller waits for before it announces
// the attempt. The error is a run stop.
func (r *run) attempt(ctx context.Context, ln *lane, n *Node, h Handler, visit, attempt int) (Outcome, *stageFiles, error) {
	s, err := r.newStage(ln, n, visit, attempt)
	if err != nil {
		return finishFailure(failOutcome(ClassTransientInfra, err.Error())), doneStageFiles(), nil
	}
	o, err := r.callHandler(ctx, h, s)
	if err != nil {
		return Outcome{}, nil, err
	}
	// A failure the handler returned once the run was canceled may be the
	// cancel's doing (a process killed, a call cut short): it counts as
	// canceled. Asked here, not once the outcome has settled: a failure
	// the node had on its own before the cancel (a sibling winning
	// first_success meanwhile) is kept, as cutCheckpoint keeps it. The
	// steps after say themselves when the cancel failed them.
	cut := ctx.Err() != nil
	o = r.applyStatusFile(ctx, s, o)
	if o.Status == "" {
		o = failOutcome(ClassStructural, fmt.Sprintf("the handler of node %s returned no status", n.ID))
	}
	o = postVerify(ctx, s, o)
	o = finishFailure(o)
	if cut && o.IsFailure() {
		o.FailureClass = ClassCanceled
	}
	return o, r.startStageFiles(ctx, s, o), nil
}

// newStage prepares the stage directory for an attempt: earlier attempts'
// files move to history/, stale status files go.
func (r *run) newStage(ln *lane, n *Node, visit, attempt int) (*Stage, error) {
	dir := r.stageDir(n)
	if err := prepareStageDir(dir); err != nil {
		return nil, fmt.Errorf("prepare stage directory of node %s: %w", n.ID, err)
	}
	s := &Stage{
		RunID: r.cfg.RunID, Node: n, Pipeline: r.p, Context: ln.rc,
		Visit: visit, Attempt: attempt, Dir: dir, Workspace: r.cfg.Workspace, NodeWorkspace: r.cfg.NodeWorkspace,
		Predecessor: ln.prev, PredecessorOutcome: ln.prevOutcome,
		Host: r.cfg.Host, Agent: r.cfg.Agent, Interviewer: r.cfg.Interviewer, Usage: r.cfg.Usage,
	}
	s.Env = stageEnv(s)
	if err := removeStale(s.Env[EnvStatusPath], s.Env[EnvStatusFallbackPath]); err != nil {
		return nil, fmt.Errorf("node %s: %w", n.ID, err)
	}
	return s, nil
}

func (r *run) stageDir(n *Node) string {
	if name, ok := r.stageAlias[n.ID]; ok {
		return filepath.Join(r.cfg.RunDir, name)
	}
	return filepath.Join(r.cfg.RunDir, stageDirName(n.ID))
}

// stageDirName makes a node ID safe as one path element.
func stageDirName(id string) string {
	b := []byte(id)
	for i, c := range b {
		if c == '/' || c == '\\' || c == 0 {
			b[i] = '_'
		}
	}
	if s := string(b); s != "" && s != "." && s != ".." {
		return s
	}
	return "_" + string(b)
}

func stageEnv(s *Stage) map[string]string {
	env := map[string]string{
		EnvStatusPath:      filepath.Join(s.Dir, "status.json"),
		EnvLogsDir:         s.Dir,
		EnvRunID:           s.RunID,
		EnvNodeID:          s.Node.ID,
		EnvPredecessorNode: s.Predecessor,
	}
	if s.Workspace != "" {
		env[EnvStatusFallbackPath] = filepath.Join(s.Workspace, StatusFallbackName)
	}
	if s.PredecessorOutcome != nil {
		env[EnvPredecessorOutcome] = string(s.PredecessorOutcome.Status)
	} else {
		env[EnvPredecessorOutcome] = ""
	}
	return env
}

// callHandler runs h, turning a panic into a failure with the panic and
// its stack in panic.txt and an error into a failure. Run stops pass.
func (r *run) callHandler(ctx context.Context, h Handler, s *Stage) (o Outcome, err error) {
	defer func() {
		if v := recover(); v != nil {
			o, err = panicOutcome(s, v, debug.Stack()), nil
		}
	}()
	o, err = h.Execute(ctx, s)
	var se *stopError
	if errors.As(err, &se) {
		return Outcome{}, se
	}
	if err != nil {
		return failOutcome(classifyError(err), fmt.Sprintf("node %s: %v", s.Node.ID, err)), nil
	}
	return o, nil
}

func panicOutcome(s *Stage, v any, stack []byte) Outcome {
	where := "panic.txt"
	if err := safefile.WriteFile(filepath.Join(s.Dir, "panic.txt"), fmt.Appendf(nil, "panic: %v\n\n%s", v, stack)); err != nil {
		where = "the log (could not write panic.txt: " + err.Error() + ")"
	}
	return failOutcome(ClassDeterministic, fmt.Sprintf("the handler of node %s panicked: %v (stack in %s)", s.Node.ID, v, where))
}

// applyStatusFile lets a status file written by the stage's process
// override the handler's outcome; junk in it fails the node.
func (r *run) applyStatusFile(ctx context.Context, s *Stage, o Outcome) Outcome {
	primary, fallback := s.Env[EnvStatusPath], s.Env[EnvStatusFallbackPath]
	defer removeStale(fallback) // never left in the workspace to be committed
	f, path, err := readStatusFile(ctx, r.cfg.Sleep, primary, fallback)
	switch {
	case errors.Is(err, errNoStatusFile):
		return o
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return failOutcome(ClassCanceled, fmt.Sprintf("node %s: canceled while its %s was read again: %v", s.Node.ID, filepath.Base(path), err))
	case err != nil:
		return failOutcome(ClassDeterministic, fmt.Sprintf("node %s wrote %s: %v", s.Node.ID, filepath.Base(path), err))
	}
	n := overrideWithStatusFile(o, f)
	if isVerifyKind(s.Node.Kind) && o.IsFailure() && !n.IsFailure() {
		// A verify node's verdict is its command's: a status file may fail
		// it, never pass it (else a leftover process could turn red green).
		o.Notes = joinNotes(o.Notes, fmt.Sprintf("%s says %q; ignored: a verify node passes only when its command does",
			filepath.Base(path), n.Status))
		return o
	}
	return n
}

func isVerifyKind(k Kind) bool { return k == KindVerify || k == KindVerifyArtifacts }
