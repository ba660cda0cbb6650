package attractor

import (
	"context"
	"fmt"
	"slices"
)

// branchRun is a branch's own copy of the run: the same pipeline and
// configuration with the branch's host and workspace, a private state and
// a listener that hands every event to the run's goroutine. Handlers,
// Agent, Interviewer, Sleep and Rand are shared, so with a BranchHost they
// may be called from several branches at once.
func (r *run) branchRun(b Branch, st *State, alias map[string]string, lis Listener) *run {
	cfg := r.cfg
	cfg.Host, cfg.Workspace = b.Host, b.Workspace
	st.track()
	return &run{
		p: r.p, cfg: cfg, st: st, lis: lis, log: r.log,
		settings: r.settings, started: r.started, stageAlias: alias,
	}
}

// branchListener forwards a branch's events to the run's goroutine, which
// calls the run's Listener; errors are reported there.
type branchListener struct {
	index int
	msgs  chan<- branchMsg
}

func (l branchListener) send(what string, f func(ctx context.Context, lis Listener) error) error {
	l.msgs <- branchMsg{index: l.index, what: what, event: f}
	return nil
}

func (l branchListener) NodeStarted(_ context.Context, ev NodeStarted) error {
	return l.send("node started", func(ctx context.Context, lis Listener) error { return lis.NodeStarted(ctx, ev) })
}

func (l branchListener) AttemptFinished(_ context.Context, ev AttemptFinished) error {
	return l.send("attempt finished", func(ctx context.Context, lis Listener) error { return lis.AttemptFinished(ctx, ev) })
}

func (l branchListener) EdgeSelected(_ context.Context, ev EdgeSelected) error {
	return l.send("edge selected", func(ctx context.Context, lis Listener) error { return lis.EdgeSelected(ctx, ev) })
}

func (l branchListener) Checkpointed(_ context.Context, ev Checkpointed) error {
	return l.send("checkpointed", func(ctx context.Context, lis Listener) error { return lis.Checkpointed(ctx, ev) })
}

// RunFinished is never called for a branch; the run reports its own end.
func (l branchListener) RunFinished(context.Context, *RunResult) error { return nil }

// sharedStageDirs gives a node that more than one branch can reach before
// the fan-in a stage directory per branch, <node>@<index>-<head>, since
// those branches may run it at the same time. Every other node keeps its
// usual directory.
func sharedStageDirs(p *Pipeline, heads []string, fanIn string) []map[string]string {
	reach := make([][]string, len(heads))
	count := map[string]int{}
	for i, h := range heads {
		reach[i] = reachableBefore(p, h, fanIn)
		for _, id := range reach[i] {
			count[id]++
		}
	}
	aliases := make([]map[string]string, len(heads))
	for i, h := range heads {
		for _, id := range reach[i] {
			if count[id] < 2 {
				continue
			}
			if aliases[i] == nil {
				aliases[i] = map[string]string{}
			}
			aliases[i][id] = fmt.Sprintf("%s@%d-%s", stageDirName(id), i, stageDirName(h))
		}
	}
	return aliases
}

// reachableBefore lists the nodes reachable from head without passing
// through stop, head included, each once.
func reachableBefore(p *Pipeline, head, stop string) []string {
	if head == stop {
		return nil
	}
	seen := map[string]bool{head: true}
	out := []string{head}
	for i := 0; i < len(out); i++ {
		for _, e := range p.Outgoing(out[i]) {
			if e.To != stop && !seen[e.To] {
				seen[e.To] = true
				out = append(out, e.To)
			}
		}
	}
	return out
}

// absorb folds what a branch did into the run state: the nodes it
// completed, their outcomes, retry counts and goal gates, and the visit
// and failure-signature counts it added since fork.
func (s *State) absorb(fork, branch *State) {
	added := branch.Completed[len(fork.Completed):]
	s.Completed = append(s.Completed, added...)
	for _, id := range uniq(added) {
		s.setOutcome(id, branch.Outcomes[id])
		s.setRetries(id, branch.Retries[id])
	}
	for id, n := range branch.Visits {
		s.setVisits(id, s.Visits[id]+n-fork.Visits[id])
	}
	for k, n := range branch.Signatures {
		if d := n - fork.Signatures[k]; d > 0 {
			s.addSignature(k, d)
		}
	}
	for _, g := range branch.GoalGates {
		if slices.Contains(added, g.Node) {
			s.recordGoalGate(g.Node, g.Status)
		}
	}
}

func uniq(ids []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
