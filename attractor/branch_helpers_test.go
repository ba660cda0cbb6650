package attractor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// forkHost is a BranchHost for tests. The run's own processes run with
// bash (execHost); every branch gets a directory of its own and a host
// whose processes the test scripts through exec (nil runs them with bash
// in the branch directory). Join writes a file named "merged" listing the
// refs into the run's workspace, or returns joinErr.
type forkHost struct {
	*execHost
	root string
	exec func(ctx context.Context, ref string, req ExecRequest) ExecResult
	// checkpoint, when set, runs before a branch's checkpoint is taken;
	// an error fails that checkpoint.
	checkpoint func(ctx context.Context, ref string, req CheckpointRequest) error
	joinErr    error

	mu     sync.Mutex
	active int // processes running in branches
	// maxOpen is the most branches forked and not yet released at once.
	maxOpen    int
	forks      []string
	released   []string
	joins      [][]string
	branches   []*forkBranch
	releasedCh map[string]chan struct{}
}

func newForkHost(t *testing.T) *forkHost {
	return &forkHost{execHost: &execHost{}, root: t.TempDir(), releasedCh: map[string]chan struct{}{}}
}

// forkHarness is a harness whose host forks branches.
func forkHarness(t *testing.T) (*harness, *forkHost) {
	h := newHarness(t)
	fh := newForkHost(t)
	h.host = fh.execHost
	h.cfg.Host = fh
	return h, fh
}

func refOf(head string) string { return "ref/" + head }

// releasedSignal is closed when the branch headed by head is released.
func (h *forkHost) releasedSignal(head string) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch, ok := h.releasedCh[refOf(head)]
	if !ok {
		ch = make(chan struct{})
		h.releasedCh[refOf(head)] = ch
	}
	return ch
}

func (h *forkHost) Fork(_ context.Context, req ForkRequest) (Branch, error) {
	dir := filepath.Join(h.root, fmt.Sprintf("%d-%s", req.Index, req.Head))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Branch{}, err
	}
	h.mu.Lock()
	h.forks = append(h.forks, req.Head)
	h.maxOpen = max(h.maxOpen, len(h.forks)-len(h.released))
	h.mu.Unlock()
	ref := refOf(req.Head)
	fb := &forkBranch{h: h, ref: ref}
	h.mu.Lock()
	h.branches = append(h.branches, fb)
	h.mu.Unlock()
	return Branch{Host: fb, Workspace: dir, Ref: ref}, nil
}

func (h *forkHost) Release(_ context.Context, b Branch) error {
	h.releasedSignal(strings.TrimPrefix(b.Ref, "ref/")) // creates the channel if needed
	h.mu.Lock()
	defer h.mu.Unlock()
	h.released = append(h.released, b.Ref)
	close(h.releasedCh[b.Ref])
	return nil
}

func (h *forkHost) Join(_ context.Context, req JoinRequest) (string, error) {
	h.mu.Lock()
	h.joins = append(h.joins, req.Refs)
	h.mu.Unlock()
	if h.joinErr != nil {
		return "", h.joinErr
	}
	data := strings.Join(req.Refs, "\n") + "\n"
	return "merge1", os.WriteFile(filepath.Join(req.Workspace, "merged"), []byte(data), 0o644)
}

func (h *forkHost) snapshot() (forks, released []string, joins [][]string, maxOpen int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.forks...), append([]string(nil), h.released...), append([][]string(nil), h.joins...), h.maxOpen
}

// forkBranch is one branch's host. Its checkpoints are its own, without
// a lock, so nothing in the fake orders two branches' listener calls.
type forkBranch struct {
	h     *forkHost
	ref   string
	ckpts []string
}

func (b *forkBranch) Exec(ctx context.Context, req ExecRequest) (ExecResult, error) {
	h := b.h
	h.mu.Lock()
	h.active++
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.active--
		h.mu.Unlock()
	}()
	if h.exec == nil {
		return h.execHost.Exec(ctx, req)
	}
	return h.exec(ctx, b.ref, req), nil
}

func (b *forkBranch) Checkpoint(ctx context.Context, req CheckpointRequest) (string, error) {
	if b.h.checkpoint != nil {
		if err := b.h.checkpoint(ctx, b.ref, req); err != nil {
			return "", err
		}
	}
	b.ckpts = append(b.ckpts, req.Node.ID)
	return "sha-" + req.Node.ID, nil
}

// branchCheckpoints lists each branch's checkpoints as ref:node; call it
// after the run.
func (h *forkHost) branchCheckpoints() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, b := range h.branches {
		for _, n := range b.ckpts {
			out = append(out, b.ref+":"+n)
		}
	}
	return out
}

// pairs lets processes through two at a time: each waits until another
// arrives (or ctx ends). It passes only if two branches run at once.
type pairs struct {
	mu      sync.Mutex
	waiting chan struct{}
}

func (p *pairs) meet(ctx context.Context) bool {
	p.mu.Lock()
	if ch := p.waiting; ch != nil {
		p.waiting = nil
		p.mu.Unlock()
		close(ch)
		return true
	}
	ch := make(chan struct{})
	p.waiting = ch
	p.mu.Unlock()
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	}
}

// plainListener records events without a lock: the race detector flags
// it if the engine ever calls the listener from two goroutines.
type plainListener struct {
	NopListener
	events []string
}

func (l *plainListener) NodeStarted(_ context.Context, ev NodeStarted) error {
	l.events = append(l.events, "start "+ev.Node.ID)
	return nil
}

func (l *plainListener) Checkpointed(_ context.Context, ev Checkpointed) error {
	l.events = append(l.events, "checkpoint "+ev.Node+" "+ev.SHA)
	return nil
}

func (l *plainListener) EdgeSelected(_ context.Context, ev EdgeSelected) error {
	l.events = append(l.events, "edge "+ev.From+"->"+ev.To)
	return nil
}

// fanGraph is start -> fan -> each branch node -> join -> done.
func fanGraph(fanAttrs, joinAttrs string, branches ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph t {\nstart [shape=Mdiamond]; done [shape=Msquare]\nfan [shape=component%s]\njoin [shape=tripleoctagon%s]\n", fanAttrs, joinAttrs)
	b.WriteString("start -> fan\njoin -> done\n")
	for _, n := range branches {
		id := strings.Fields(n)[0]
		fmt.Fprintf(&b, "%s\nfan -> %s\n%s -> join\n", n, id, id)
	}
	b.WriteString("}\n")
	return b.String()
}

func tool(id, cmd string) string {
	return fmt.Sprintf("%s [shape=parallelogram, tool_command=%q]", id, cmd)
}

// fanResults returns the parallel node's branch results.
func fanResults(t *testing.T, res *RunResult) []BranchResult {
	t.Helper()
	rs, err := branchResults(NewContext(res.Outcomes["fan"].ContextUpdates))
	if err != nil {
		t.Fatalf("parallel.results: %v", err)
	}
	return rs
}
