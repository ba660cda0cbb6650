package checks

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Live progress. While a node runs the engine says nothing, and an agent
// node may run for most of an hour, so the Publisher keeps its own clock:
// from a node's start until the run ends it re-renders the summary check
// once per Throttle with every running node's elapsed time and the tail of
// its output (cleaned and redacted like any other output). Sending stays
// the worker's business: the summary's body is simply the latest state,
// which the throttle lets out at most once per Throttle, a rate limit
// holds back (the latest state wins, nothing queues up), and the run's
// completion replaces, since a completed view renders no live section and
// every render reads the view under the same lock as RunFinished's.

// Live tail bounds: the end of a running node's output the summary shows.
const (
	liveTailLines = 30
	liveTailBytes = 3000
)

// liveNodes are the nodes running now. Guarded by Publisher.mu.
type liveNodes struct {
	since   map[string]time.Time // node → when its current visit started
	ticking bool                 // a ticker goroutine runs
	quit    chan struct{}        // closed when the run is over for the Publisher
}

// liveStarted notes that node started, and starts the ticker.
func (p *Publisher) liveStarted(ctx context.Context, node string) {
	if node == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live.since == nil {
		p.live.since = map[string]time.Time{}
	}
	if p.live.quit == nil {
		p.live.quit = make(chan struct{})
	}
	p.live.since[node] = p.opts.Now()
	if p.live.ticking || p.closed || p.stopped {
		return
	}
	p.live.ticking = true
	go p.tick(context.WithoutCancel(ctx), p.live.quit)
}

// liveFinished notes that node's visit ended.
func (p *Publisher) liveFinished(node string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.live.since, node)
}

// liveStopLocked ends the ticker for good. The caller holds mu.
func (p *Publisher) liveStopLocked() {
	if p.live.quit == nil {
		p.live.quit = make(chan struct{})
	}
	select {
	case <-p.live.quit:
	default:
		close(p.live.quit)
	}
}

// tick re-renders the summary every Throttle while a node runs, and
// wakes the worker. It ends when no node runs, the run has ended or the
// host stopped the Publisher; the next node's start starts another.
func (p *Publisher) tick(ctx context.Context, quit <-chan struct{}) {
	for {
		select {
		case <-quit:
			return
		case <-p.opts.After(p.opts.Throttle):
		}
		p.mu.Lock()
		v := p.rec.View()
		if p.stopped || p.closed || len(p.live.since) == 0 || v.Finished() {
			p.live.ticking = false
			p.mu.Unlock()
			return
		}
		p.renderLocked(v, nil, false)
		p.mu.Unlock()
		p.kick(ctx)
	}
}

// refreshLiveLocked renders the summary again before a round that is
// not held back, so that what goes out is the state at the moment it
// goes, not at the last tick: after a rate limit, the latest. The caller
// holds mu.
func (p *Publisher) refreshLiveLocked(now time.Time) {
	if len(p.live.since) == 0 || p.stopped || now.Before(p.blocked) {
		return
	}
	if v := p.rec.View(); v.Status == RunRunning {
		p.renderLocked(v, nil, false)
	}
}

// withLive adds the running nodes to the summary body of a run under way:
// their elapsed time in the title, and a section under the outcome line
// with each one's output so far. The caller holds mu.
func (p *Publisher) withLive(v *RunView, b body) body {
	if v.Status != RunRunning || len(p.live.since) == 0 {
		return b
	}
	now := p.opts.Now()
	var names []string
	var sec strings.Builder
	sec.WriteString("### ⏳ Running now\n\n")
	for i := range v.Nodes {
		n := &v.Nodes[i]
		since, ok := p.live.since[n.ID]
		if !ok || (n.State != StateRunning && n.State != StateRetrying) {
			continue
		}
		elapsed := liveDuration(now.Sub(since))
		names = append(names, n.ID+" ("+elapsed+")")
		sec.WriteString(liveNode(n, elapsed, p.opts.Render))
	}
	if len(names) == 0 {
		return b
	}
	r := p.opts.Render.Redactor
	b.title = clip(firstLine(r.Redact("running "+strings.Join(names, ", ")+" · "+passedCount(v))), maxTitle)
	section := r.Redact(sec.String())
	head, rest, _ := strings.Cut(b.summary, "\n\n")
	b.summary = head + "\n\n" + section + "\n" + rest
	if len(b.summary) > MaxOutput {
		// The live section is what a reader came for: the rest is cut.
		b.summary = head + "\n\n" + section + "\n" + Truncate(rest, max(MaxOutput-len(head)-len(section)-3, 0), p.opts.Render.RunURL)
	}
	return b
}

// liveNode is one running node's part of the live section.
func liveNode(n *NodeView, elapsed string, opts RenderOptions) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s running for **%s**", code(n.ID), elapsed)
	if n.State == StateRetrying || n.Attempts > 0 {
		fmt.Fprintf(&b, " (attempt %d)", n.Attempts+1)
	}
	if url := opts.logURL(n.ID); url != "" {
		b.WriteString(" · " + link("live log", url))
	}
	b.WriteString("\n\n")
	tail := lastLines(strings.TrimRight(opts.outputTail(n), "\n"), liveTailLines, liveTailBytes)
	if strings.TrimSpace(tail) == "" {
		b.WriteString("_No output yet._\n\n")
		return b.String()
	}
	b.WriteString("Output so far (last lines):\n\n" + codeBlock(tail) + "\n")
	return b.String()
}

// lastLines is the end of s: at most n lines and about max bytes, cut on a
// line (or, for one long line, a UTF-8) boundary.
func lastLines(s string, n, max int) string {
	if len(s) > max {
		s = suffixRunes(s, max)
		if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
			s = s[i+1:]
		}
	}
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// liveDuration is a running node's time so far, in whole seconds.
func liveDuration(d time.Duration) string {
	if d < time.Second {
		return "0s"
	}
	if d < time.Minute {
		return fmt.Sprintf("%ds", int(d.Seconds()))
	}
	return duration(d)
}

// passedCount is "2 of 5 nodes passed".
func passedCount(v *RunView) string {
	passed := 0
	for _, n := range v.Nodes {
		if n.State == StateSuccess || n.State == StatePartial {
			passed++
		}
	}
	return fmt.Sprintf("%d of %d nodes passed", passed, len(v.Nodes))
}
