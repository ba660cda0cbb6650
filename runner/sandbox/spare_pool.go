package sandbox

import (
	"slices"
	"sync"
	"time"
)

// Spare jails a Sandbox keeps ready; how long they wait for a Run before
// they are ended; how many makes may fail in a row before a Sandbox stops
// trying (its Runs then all start cold, as they would without spares).
const (
	spareJails       = 2
	spareIdle        = time.Minute
	maxSpareFailures = 3
)

// sparePool holds the spare jails of one Sandbox. It makes them only once
// a jailed Run asked for one (tests make many Sandboxes that run nothing
// that fits), one at a time in the background, and ends them when no Run
// took one for idle, and at close. A spare the bot leaves behind when it
// dies ends too: its options pipe reaches EOF and bwrap exits.
type sparePool struct {
	newSpare func() (*spare, error)
	size     int
	idle     time.Duration

	mu       sync.Mutex
	spares   []*spare
	lastTake time.Time
	filling  bool
	failures int // makes that failed in a row
	closed   bool
	reaper   *time.Timer    // armed while there are spares
	wg       sync.WaitGroup // the filler and the reaper at work
}

func newSparePool(newSpare func() (*spare, error)) *sparePool {
	return &sparePool{newSpare: newSpare, size: spareJails, idle: spareIdle}
}

// take returns a spare, or nil when none is ready, and has the pool made
// up again in the background.
func (p *sparePool) take() *spare {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.lastTake = time.Now()
	var sp *spare
	if len(p.spares) > 0 {
		sp = p.spares[0] // the oldest
		p.spares = slices.Delete(p.spares, 0, 1)
	}
	p.refillLocked()
	return sp
}

// prime has the pool made up as if a Run had just taken a spare.
func (p *sparePool) prime() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.lastTake = time.Now()
		p.refillLocked()
	}
}

// refillLocked starts the filler unless it is at work; p.mu is held.
func (p *sparePool) refillLocked() {
	if !p.filling && !p.closed && p.failures < maxSpareFailures {
		p.filling = true
		p.wg.Add(1)
		go p.fill()
	}
}

// fill makes spares until there are size of them.
func (p *sparePool) fill() {
	defer p.wg.Done()
	for {
		p.mu.Lock()
		if p.closed || len(p.spares) >= p.size {
			p.filling = false
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		sp, err := p.newSpare()
		p.mu.Lock()
		if err != nil || p.closed {
			if err != nil {
				p.failures++ // Run's cold path reports what is wrong
			}
			p.filling = false
			p.mu.Unlock()
			if sp != nil {
				sp.discard()
			}
			return
		}
		p.failures = 0
		p.spares = append(p.spares, sp)
		if p.reaper == nil {
			p.reaper = time.AfterFunc(p.idle, p.reapIdle)
		}
		p.mu.Unlock()
	}
}

// reapIdle ends the spares once no Run took one for idle.
func (p *sparePool) reapIdle() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	if left := p.idle - time.Since(p.lastTake); left > 0 {
		p.reaper.Reset(left)
		p.mu.Unlock()
		return
	}
	idle := p.spares
	p.spares, p.reaper = nil, nil
	p.wg.Add(1)
	p.mu.Unlock()
	defer p.wg.Done()
	for _, sp := range idle {
		sp.discard()
	}
}

// close ends every spare and waits for the filler and the reaper: no
// spare is left, and none is made after.
func (p *sparePool) close() {
	p.mu.Lock()
	p.closed = true
	idle := p.spares
	p.spares = nil
	if p.reaper != nil {
		p.reaper.Stop()
		p.reaper = nil
	}
	p.mu.Unlock()
	for _, sp := range idle {
		sp.discard()
	}
	p.wg.Wait()
}

// ready reports how many spares are ready.
func (p *sparePool) ready() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.spares)
}
