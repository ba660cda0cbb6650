package attractor

import (
	"context"
	"errors"
	"fmt"
)

// Concurrent fan-out, for hosts that fork workspaces (BranchHost).
//
// The run's goroutine stays the only owner of the run: it forks each
// branch's workspace, starts at most max_parallel branch goroutines, and
// receives on one channel both the listener events the branches produce
// (it calls the run's Listener itself, so listeners never hear two
// goroutines) and each branch's end. A branch goroutine touches only its
// own copy of the run — state, lane, host, workspace — which the owner
// folds back into the run state in edge order once every branch goroutine
// has exited, so the result does not depend on which branch finished
// first.
//
// first_success cancels the branches still running once one succeeds and
// starts no more; a branch that succeeds after that counts as canceled, so
// the fan-in merges exactly one branch, while one that failed on its own
// keeps its failure (the run must not forget it). A branch
// that stops the run (a failed checkpoint, a visit limit, the cycle
// breaker) cancels its siblings too; a sibling whose checkpoint that
// cancel cuts short ends canceled, not stopped (cutCheckpoint). Either way the owner waits for every
// started branch to exit before it returns, and branches never started are
// left out of the results.

// branchMsg travels from a branch goroutine to the run's goroutine: a
// listener call to make (event set) or the branch's end.
type branchMsg struct {
	index  int
	what   string
	event  func(ctx context.Context, l Listener) error
	result BranchResult
	err    error
}

// branchSlot is one branch as the owner sees it.
type branchSlot struct {
	head    string
	started bool
	branch  Branch
	run     *run // the branch's own copy of the run; nil until forked
	result  BranchResult
	err     error
}

// branchGroup is one concurrent fan-out, owned by the run's goroutine.
type branchGroup struct {
	r       *run
	s       *Stage // the parallel node's stage
	bh      BranchHost
	fanIn   string
	policy  string
	limit   int
	slots   []*branchSlot
	aliases []map[string]string
	fork    *State // the run state the branches start from
	msgs    chan branchMsg
	cancel  context.CancelFunc
	running int
	winner  int  // first_success: the branch that succeeded first, else -1
	halted  bool // start no more branches
}

// fanOutConcurrent runs the parallel node's branches at once in forked
// workspaces and returns their results in edge order.
func (r *run) fanOutConcurrent(ctx context.Context, s *Stage, bh BranchHost, fanIn, policy string) ([]BranchResult, error) {
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	edges := r.p.Outgoing(s.Node.ID)
	g := &branchGroup{
		r: r, s: s, bh: bh, fanIn: fanIn, policy: policy, limit: maxParallel(s.Node),
		fork: r.st.clone(), msgs: make(chan branchMsg), cancel: cancel, winner: -1,
	}
	heads := make([]string, len(edges))
	for i, e := range edges {
		heads[i] = e.To
		g.slots = append(g.slots, &branchSlot{head: e.To})
	}
	g.aliases = sharedStageDirs(r.p, heads, fanIn)
	g.loop(ctx, bctx)
	return g.collect()
}

func maxParallel(n *Node) int {
	if n.MaxParallel > 0 {
		return n.MaxParallel
	}
	return defaultMaxParallel
}

// loop starts branches while there is room and handles what they send
// until none is running.
func (g *branchGroup) loop(ctx, bctx context.Context) {
	next := 0
	for {
		for g.running < g.limit && next < len(g.slots) && !g.halted && bctx.Err() == nil {
			g.start(ctx, bctx, next)
			next++
		}
		if g.running == 0 {
			return
		}
		g.receive(ctx, <-g.msgs)
	}
}

// start forks branch i's workspace and runs the branch on a goroutine.
func (g *branchGroup) start(ctx, bctx context.Context, i int) {
	sl := g.slots[i]
	sl.started = true
	b, err := g.bh.Fork(ctx, ForkRequest{RunID: g.r.cfg.RunID, Parallel: g.s.Node, Index: i, Head: sl.head})
	if err == nil && (b.Host == nil || b.Workspace == "") {
		err = errors.New("the host forked a branch without a host or workspace")
	}
	if err != nil {
		sl.result = BranchResult{Branch: sl.head}.failed(ClassTransientInfra, fmt.Sprintf("could not make a workspace for branch %s: %v", sl.head, err))
		return
	}
	sl.branch = b
	br := g.r.branchRun(b, g.fork.clone(), g.aliases[i], branchListener{index: i, msgs: g.msgs})
	sl.run = br
	ln := &lane{rc: g.s.Context.Clone(), prev: g.s.Node.ID, branch: sl.head}
	parallel, head, fanIn, msgs := g.s.Node, sl.head, g.fanIn, g.msgs
	g.running++
	go func() {
		res, err := br.walkBranch(bctx, ln, parallel, head, fanIn)
		res.Ref = b.Ref
		msgs <- branchMsg{index: i, result: res, err: err}
	}()
}

// receive handles one message from a branch goroutine.
func (g *branchGroup) receive(ctx context.Context, m branchMsg) {
	if m.event != nil {
		g.r.report(ctx, m.what, m.event(ctx, g.r.lis))
		return
	}
	g.running--
	sl := g.slots[m.index]
	sl.result, sl.err = m.result, m.err
	if err := g.bh.Release(context.WithoutCancel(ctx), sl.branch); err != nil {
		g.r.log.WarnContext(ctx, "could not release a branch workspace", "run", g.r.cfg.RunID, "node", sl.head, "err", err)
	}
	switch {
	case m.err != nil:
		g.halt()
	case g.winner >= 0 && isSuccess(m.result.Status):
		sl.result = sl.result.failed(ClassCanceled, fmt.Sprintf("canceled: branch %s succeeded first (join_policy=first_success)", g.slots[g.winner].head))
	case g.policy == joinFirstSuccess && isSuccess(m.result.Status):
		g.winner = m.index
		g.halt()
	}
}

// halt cancels the running branches and starts no more.
func (g *branchGroup) halt() {
	g.halted = true
	g.cancel()
}

// collect folds the branches into the run state and returns their results
// in edge order, with the first branch error, if any, in edge order too.
func (g *branchGroup) collect() ([]BranchResult, error) {
	var results []BranchResult
	var stopErr error
	for _, sl := range g.slots {
		if !sl.started {
			continue
		}
		if sl.run != nil {
			g.r.st.absorb(g.fork, sl.run.st)
		}
		if sl.err != nil && stopErr == nil {
			stopErr = sl.err
		}
		results = append(results, sl.result)
	}
	return results, stopErr
}
