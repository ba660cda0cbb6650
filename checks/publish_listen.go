package checks

import (
	"context"
	"sync"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// The listener methods record the event, recompute the bodies it touches
// and leave the sending to the worker, so the engine never waits for
// GitHub. They never fail: a reporting problem must not fail the run.

// NodeStarted moves the summary check, and a verify node's own check, to
// in_progress.
func (p *Publisher) NodeStarted(ctx context.Context, ev attractor.NodeStarted) error {
	if p.deaf() {
		return nil
	}
	_ = p.rec.NodeStarted(ctx, ev)
	p.lateVerify(ev.Node)
	p.changed(ctx, nodeID(ev.Node))
	return nil
}

// AttemptFinished updates the node's check; the final attempt of a verify
// node completes it with its conclusion and annotations.
func (p *Publisher) AttemptFinished(ctx context.Context, ev attractor.AttemptFinished) error {
	if p.deaf() {
		return nil
	}
	_ = p.rec.AttemptFinished(ctx, ev)
	p.changed(ctx, nodeID(ev.Node))
	return nil
}

// EdgeSelected updates the summary check's graph.
func (p *Publisher) EdgeSelected(ctx context.Context, ev attractor.EdgeSelected) error {
	if p.deaf() {
		return nil
	}
	_ = p.rec.EdgeSelected(ctx, ev)
	p.changed(ctx, "")
	return nil
}

// Checkpointed adds the checkpoint commit to the node's checks.
func (p *Publisher) Checkpointed(ctx context.Context, ev attractor.Checkpointed) error {
	if p.deaf() {
		return nil
	}
	_ = p.rec.Checkpointed(ctx, ev)
	p.changed(ctx, ev.Node)
	return nil
}

// RunFinished completes the summary check with the run's conclusion and
// every verify check still open as skipped or cancelled.
func (p *Publisher) RunFinished(ctx context.Context, res *attractor.RunResult) error {
	_ = p.rec.RunFinished(ctx, res)
	p.rerender()
	p.kick(ctx)
	return nil
}

// changed recomputes the summary check and node's check ("" for none).
func (p *Publisher) changed(ctx context.Context, node string) {
	var nodes []string
	if node != "" {
		nodes = []string{node}
	}
	p.mu.Lock()
	p.renderLocked(p.rec.View(), nodes, false)
	p.mu.Unlock()
	p.kick(ctx)
}

// deaf reports whether the host has ended the run.
func (p *Publisher) deaf() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stopped
}

func nodeID(n *attractor.Node) string {
	if n == nil {
		return ""
	}
	return n.ID
}

// worker is the goroutine that sends updates while the run goes on.
type worker struct {
	kick   chan struct{} // a change is waiting; holds at most one
	quit   chan struct{} // closed by stop
	done   chan struct{} // closed when the goroutine has returned
	cancel context.CancelFunc
	once   sync.Once
}

// kick wakes the worker, starting it on first use. Its context keeps
// ctx's values but not its cancellation: the run's context ends when the
// run is cancelled, and that is exactly when the checks must still be
// completed.
func (p *Publisher) kick(ctx context.Context) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	w := p.worker
	if w == nil {
		wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		w = &worker{kick: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{}), cancel: cancel}
		p.worker = w
		go p.work(wctx, w)
	}
	p.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default: // already kicked
	}
}

// work sends what is due whenever kicked, and arms a timer for what the
// throttle held back or a failure left behind: the latest state of every
// check gets out even when no further event comes.
func (p *Publisher) work(ctx context.Context, w *worker) {
	defer close(w.done)
	var timer <-chan time.Time
	for {
		select {
		case <-w.quit:
			return
		case <-w.kick:
		case <-timer:
		}
		next, _ := p.sync(ctx, false) // failures are logged and retried
		timer = nil
		if !next.IsZero() {
			timer = p.opts.After(max(next.Sub(p.opts.Now()), 0))
		}
	}
}

// stop ends the worker once its round is over. A round is bounded by
// ghapp's own attempts and waits, but not by ctx: if ctx ends first the
// round's calls are cancelled, and Close's own rounds send what they lost.
func (w *worker) stop(ctx context.Context) {
	w.once.Do(func() { close(w.quit) })
	select {
	case <-w.done:
	case <-ctx.Done():
		w.cancel()
		<-w.done
	}
	w.cancel()
}
