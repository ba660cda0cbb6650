package attractor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// run is one execution of a pipeline. Only the goroutine in loop touches it;
// a concurrent parallel branch gets a copy of its own (branchRun).
type run struct {
	p        *Pipeline
	cfg      RunConfig
	st       *State
	main     *lane
	lis      Listener
	log      *slog.Logger
	settings graphSettings
	started  time.Time
	// stageAlias renames the stage directories of some nodes: a parallel
	// branch's nodes that another branch may run at the same time.
	stageAlias map[string]string
	// frame is set on the run of a house node's child (handler_manager.go).
	frame *managerFrame
}

// lane is a sequence of node executions sharing one context: the main run
// or one parallel branch. prev is the lane's last executed node.
type lane struct {
	rc          *Context
	prev        string
	prevOutcome *Outcome
	branch      string // first node of a parallel branch; "" for the main lane
}

// stopError ends the run; it travels up through handlers (a parallel
// node's branches) without being turned into a node failure.
type stopError struct {
	node   string
	class  FailureClass
	reason string
}

func (e *stopError) Error() string { return e.reason }

func stop(node string, class FailureClass, format string, args ...any) *stopError {
	return &stopError{node: node, class: class, reason: fmt.Sprintf(format, args...)}
}

func newRun(p *Pipeline, cfg RunConfig, st *State) (*run, error) {
	if cfg.Host == nil {
		return nil, errors.New("run: RunConfig.Host is required")
	}
	if cfg.RunDir == "" {
		return nil, errors.New("run: RunConfig.RunDir is required")
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleepContext
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	r := &run{
		p: p, cfg: cfg, st: st,
		lis:      cfg.Listener,
		log:      cfg.Logger,
		settings: settingsOf(p),
		started:  time.Now(),
	}
	if r.lis == nil {
		r.lis = NopListener{}
	}
	if r.log == nil {
		r.log = slog.Default()
	}
	st.track()
	r.main = &lane{rc: &Context{m: st.Context, changing: st.noteContext}, prev: st.CurrentNode}
	if o, ok := st.Outcomes[st.CurrentNode]; ok {
		r.main.prevOutcome = &o
	}
	return r, nil
}

// seedContext mirrors graph attributes into a new run's context.
func (r *run) seedContext() {
	for k, a := range r.p.Attrs {
		r.main.rc.Set("graph."+k, a.Value.Text)
	}
	r.main.rc.Set("graph.goal", r.p.Goal)
	r.main.rc.Set(restartCountKey, 0)
}

// loop runs nodes until the run ends.
func (r *run) loop(ctx context.Context) *RunResult {
	for {
		if err := ctx.Err(); err != nil {
			return r.finish(ctx, stop(r.st.NextNode, ClassCanceled, "run canceled before node %s: %v", r.st.NextNode, context.Cause(ctx)))
		}
		n := r.p.Node(r.st.NextNode)
		if n == nil {
			return r.finish(ctx, stop("", ClassStructural, "next node %q is not in the pipeline", r.st.NextNode))
		}
		if n.Kind == KindExit {
			if next, blocked, err := r.goalGates(ctx, n); err != nil {
				return r.finish(ctx, err)
			} else if blocked {
				r.st.NextNode = next
				continue
			}
		}
		if done, err := r.step(ctx, n); err != nil || done {
			return r.finish(ctx, err)
		}
	}
}

// step executes n on the main lane and moves the run to the next node.
// done reports that the run ended successfully.
func (r *run) step(ctx context.Context, n *Node) (done bool, err error) {
	o, end, err := r.executeNode(ctx, r.main, n)
	if err != nil {
		return false, err
	}
	defer end.finish(ctx) // announced by checkpoint, unless the run stops first
	if ctx.Err() != nil {
		return false, stop(n.ID, ClassCanceled, "run canceled during node %s: %v", n.ID, context.Cause(ctx))
	}
	tr := r.transition(n, o)
	r.st.NextNode = tr.next
	r.st.Finished = tr.stop != nil || tr.next == ""
	if tr.stop == nil && tr.next != "" {
		r.prewarm(r.main, tr.next)
	}
	if err := r.checkpoint(ctx, n, o, end); err != nil {
		return false, err
	}
	if tr.stop != nil {
		return false, tr.stop
	}
	if tr.next == "" {
		return true, nil
	}
	r.emitEdge(ctx, n.ID, tr)
	return false, nil
}

// goalGates checks, before an exit runs, the goal gates in completion
// order. An unsatisfied gate sends the run to its retry target chain;
// without one the run fails.
func (r *run) goalGates(ctx context.Context, exit *Node) (next string, blocked bool, err error) {
	g, ok := r.st.unsatisfiedGate()
	if !ok {
		return "", false, nil
	}
	gate := r.p.Node(g.Node)
	target := ""
	if gate != nil {
		target = retryTarget(r.p, gate)
	}
	if target == "" {
		reason := fmt.Sprintf("goal gate %s unsatisfied (status %s) and no retry_target is set", g.Node, g.Status)
		if o, ok := r.st.Outcomes[g.Node]; ok && o.FailureReason != "" {
			reason += ": " + o.FailureReason
		}
		return "", false, stop(g.Node, ClassDeterministic, "%s", reason)
	}
	r.emitEdge(ctx, exit.ID, transition{next: target, method: ByGoalGate})
	return target, true, nil
}

// finish ends the run and reports it.
func (r *run) finish(ctx context.Context, err error) *RunResult {
	res := &RunResult{
		RunID:     r.cfg.RunID,
		Status:    StatusSuccess,
		Completed: slices.Clone(r.st.Completed),
		Outcomes:  r.st.Outcomes,
		Context:   r.st.Context,
		State:     r.st,
		Duration:  time.Since(r.started),
	}
	var se *stopError
	if errors.As(err, &se) {
		res.Status, res.FailureReason, res.FailureClass, res.FailedNode = StatusFail, se.reason, se.class, se.node
	} else if err != nil {
		res.Status, res.FailureReason, res.FailureClass = StatusFail, err.Error(), ClassStructural
	} else if t := r.st.toleratedFailures(r.p); len(t) > 0 {
		res.Status, res.Tolerated = StatusPartialSuccess, t
		res.FailureReason = "reached the exit with failures the pipeline tolerated (allow_partial or first_success): " + strings.Join(t, ", ")
	}
	r.report(ctx, "run finished", r.lis.RunFinished(context.WithoutCancel(ctx), res))
	return res
}

// report logs a listener error; listeners never fail a run.
func (r *run) report(ctx context.Context, what string, err error) {
	if err != nil {
		r.log.WarnContext(ctx, "listener failed", "run", r.cfg.RunID, "event", what, "err", err)
	}
}
