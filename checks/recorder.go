package checks

import (
	"context"
	"slices"
	"sync"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// RunInfo names a run for its checks.
type RunInfo struct {
	// Pipeline is the name in check names (kilroy/<Pipeline>); empty means
	// the digraph's ID.
	Pipeline string
	RunID    string
	HeadSHA  string
	// Notes are sentences the summary shows under the run line, such as
	// that the run used the base branch's pipelines although the pull
	// request changes them.
	Notes []string
	// Image and ImageDigest name the image the run's nodes run in, pinned;
	// empty for the host jail.
	Image, ImageDigest string
}

// Recorder builds a RunView from the engine's events. It is safe for
// concurrent use: the engine's goroutine reports while others render.
type Recorder struct {
	mu    sync.Mutex
	view  RunView
	index map[string]int // node ID → position in view.Nodes
	// cancelReason, when set by Cancel, replaces "run cancelled" as the
	// reason cancelled and unreached nodes give.
	cancelReason string
}

var _ attractor.Listener = (*Recorder)(nil)

// NewRecorder starts a view of a run of p with every node pending.
func NewRecorder(p *attractor.Pipeline, info RunInfo) *Recorder {
	r := &Recorder{index: map[string]int{}}
	r.view = RunView{Pipeline: info.Pipeline, RunID: info.RunID, HeadSHA: info.HeadSHA, Status: RunPending,
		Notes: slices.Clone(info.Notes), Image: info.Image, ImageDigest: info.ImageDigest}
	if p == nil {
		return r
	}
	if r.view.Pipeline == "" {
		r.view.Pipeline = p.Name
	}
	r.view.Goal = p.Goal
	for _, n := range p.Nodes {
		r.addNode(n)
	}
	for _, e := range p.Edges {
		ev := EdgeView{From: e.From, To: e.To, Label: e.Label}
		if e.Condition != nil {
			ev.Condition = e.Condition.Source
		}
		r.view.Edges = append(r.view.Edges, ev)
	}
	return r
}

// View returns a snapshot of the run.
func (r *Recorder) View() *RunView {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.view.clone()
}

// addNode appends a pending node; the caller holds mu (or owns r).
func (r *Recorder) addNode(n *attractor.Node) *NodeView {
	label := n.Label
	if label == "" {
		label = n.ID
	}
	r.index[n.ID] = len(r.view.Nodes)
	r.view.Nodes = append(r.view.Nodes, NodeView{
		ID: n.ID, Label: label, Kind: n.Kind, Command: nodeCommand(n),
		Verify: isVerifyNode(n), State: StatePending,
	})
	return &r.view.Nodes[len(r.view.Nodes)-1]
}

// addVerify adds a pending verify node the pipeline did not declare: a
// check the Publisher adopted without knowing the graph.
func (r *Recorder) addVerify(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.index[id]; ok {
		return
	}
	n := r.addNode(&attractor.Node{ID: id})
	n.Verify = true
	if r.view.Finished() {
		r.settle()
	}
}

// node finds a node by ID, adding one for events about nodes the
// pipeline did not declare (hand-built pipelines, engine-made nodes).
func (r *Recorder) node(n *attractor.Node, id string) *NodeView {
	if i, ok := r.index[id]; ok {
		return &r.view.Nodes[i]
	}
	if n == nil {
		n = &attractor.Node{ID: id}
	}
	return r.addNode(n)
}

// NodeStarted marks the node running.
func (r *Recorder) NodeStarted(_ context.Context, ev attractor.NodeStarted) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ev.Node == nil {
		return nil
	}
	r.view.Status = RunRunning
	n := r.node(ev.Node, ev.Node.ID)
	n.State = StateRunning
	r.view.markStarted(n)
	n.Visits++
	n.SkipReason = ""
	n.Dir = ev.Dir
	return nil
}

// AttemptFinished records the attempt and, when it is the last of the
// visit, the node's state.
func (r *Recorder) AttemptFinished(_ context.Context, ev attractor.AttemptFinished) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ev.Node == nil {
		return nil
	}
	r.view.Status = RunRunning
	n := r.node(ev.Node, ev.Node.ID)
	n.Attempts++
	n.Duration += ev.Duration
	n.Outcome, n.HasOutcome = cloneOutcome(ev.Outcome), true
	r.view.addUsage(n, ev.Outcome)
	if ev.Dir != "" {
		n.Dir = ev.Dir
	}
	if !ev.Final {
		n.State = StateRetrying
		return nil
	}
	n.State, n.SkipReason = finalState(ev.Outcome)
	return nil
}

// finalState maps the outcome of a visit's last attempt to a state.
func finalState(o attractor.Outcome) (State, string) {
	switch o.Status {
	case attractor.StatusSuccess:
		return StateSuccess, ""
	case attractor.StatusPartialSuccess:
		return StatePartial, ""
	case attractor.StatusSkipped:
		return StateSkipped, firstNonEmpty(o.Notes, o.FailureReason, "skipped by its handler")
	}
	if o.Status.Custom() {
		return StateSuccess, "" // a routing decision such as needs_dod, not a failure
	}
	if failureClass(o) == attractor.ClassCanceled {
		return StateCancelled, firstNonEmpty(o.FailureReason, "cancelled")
	}
	// fail, and a retry whose retries ran out
	return StateFailed, ""
}

// EdgeSelected counts the transition on its edge, or adds the jump.
func (r *Recorder) EdgeSelected(_ context.Context, ev attractor.EdgeSelected) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	method := attractor.EdgeMethod("")
	if ev.Edge == nil {
		method = ev.Method
	}
	r.take(ev.From, ev.To, method, ev.Edge)
	return nil
}

// take counts a transition from → to along edge, or as the jump method
// when it is set; a nil edge matches any view with the same method. The
// caller holds mu.
func (r *Recorder) take(from, to string, method attractor.EdgeMethod, edge *attractor.Edge) {
	for i := range r.view.Edges {
		e := &r.view.Edges[i]
		if e.From == from && e.To == to && e.Jump == method && r.sameEdge(e, edge) {
			e.Taken++
			return
		}
	}
	e := EdgeView{From: from, To: to, Jump: method, Taken: 1}
	if edge != nil {
		e.Label = edge.Label
		if edge.Condition != nil {
			e.Condition = edge.Condition.Source
		}
	}
	r.view.Edges = append(r.view.Edges, e)
}

// sameEdge tells parallel edges between the same nodes apart by label and
// condition; a jump matches any view with the same method.
func (r *Recorder) sameEdge(v *EdgeView, e *attractor.Edge) bool {
	if e == nil {
		return true
	}
	cond := ""
	if e.Condition != nil {
		cond = e.Condition.Source
	}
	return v.Label == e.Label && v.Condition == cond
}

// Checkpointed records the node's checkpoint commit.
func (r *Recorder) Checkpointed(_ context.Context, ev attractor.Checkpointed) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.node(nil, ev.Node).CheckpointSHA = ev.SHA
	return nil
}

// RunFinished records how the run ended and settles every node that did
// not finish.
func (r *Recorder) RunFinished(_ context.Context, res *attractor.RunResult) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if res == nil {
		return nil
	}
	r.fillFromResult(res)
	v := &r.view
	v.Reason, v.FailureClass, v.FailedNode, v.Duration = res.FailureReason, res.FailureClass, res.FailedNode, res.Duration
	switch {
	case r.cancelReason != "" || res.FailureClass == attractor.ClassCanceled:
		v.Status = RunCancelled
		if r.cancelReason != "" {
			v.Reason = r.cancelReason
		}
	case res.Status == attractor.StatusSuccess:
		v.Status = RunSuccess
	case res.Status == attractor.StatusPartialSuccess:
		v.Status, v.Tolerated = RunPartial, slices.Clone(res.Tolerated)
	default:
		v.Status = RunFailed
	}
	r.settle()
	return nil
}

// fillFromResult gives nodes completed before this recorder started
// listening their final outcome: a resumed run whose host could not Seed
// the recorder.
func (r *Recorder) fillFromResult(res *attractor.RunResult) {
	for _, id := range res.Completed {
		n := r.node(nil, id)
		o, ok := res.Outcomes[id]
		if n.State != StatePending || !ok {
			continue
		}
		n.Outcome, n.HasOutcome = cloneOutcome(o), true
		n.State, n.SkipReason = finalState(o)
	}
}

// Cancel ends the run as cancelled with reason (for example "superseded
// by 1a2b3c4") unless it already ended. Hosts call it when they stop a
// run, so that the checks complete even if the engine never reports
// RunFinished (shutdown, crash); a RunFinished that follows keeps reason.
func (r *Recorder) Cancel(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if reason == "" {
		reason = "run cancelled"
	}
	if r.view.Finished() {
		return
	}
	r.cancelReason = reason
	r.view.Status, r.view.Reason = RunCancelled, reason
	r.settle()
}

// PushFailed records that the run branch could not be pushed at the end,
// with the reason: the summary check then fails, saying so first.
func (r *Recorder) PushFailed(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.view.PushError = firstNonEmpty(firstLine(reason), "the push failed")
}

// Fail ends the run as failed with reason unless it already ended: the
// host's way to complete the checks after an internal error that kept the
// engine from reporting RunFinished.
func (r *Recorder) Fail(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.view.Finished() {
		return
	}
	r.view.Status, r.view.Reason = RunFailed, firstNonEmpty(reason, "run failed")
	r.settle()
}
