package sandbox

import (
	"fmt"
	"os"
	"sync"
	"time"
)

// netIdle is how long a run's namespace outlives its last jail, for the
// run's next node (a run's nodes follow one another, with the bot's
// checkpoint between).
const netIdle = 30 * time.Second

// netPool holds the network namespaces of a Sandbox's runs (network
// public), keyed by Jail.Run. A run's namespace is given to it when its
// first jail starts, shared by its jails, and ended netIdle after its
// last jail ended, or at Close when none is in it.
//
// Making one (pasta's start, above all) takes tens of milliseconds, so
// the pool keeps one made ahead, a spare that no jail has been in, and a
// new run takes it; the pool makes the next in the background. It makes
// the first spare only once a run asked for a namespace, ends an unused
// one after netIdle (the host's addresses it blocks may have changed),
// and makes none after Close. That spare is a namespace, never a jail:
// no jail starts before its request is known (jail_run.go); a run's
// first jail starts cold in the namespace, the next ones prewarmed in it
// (startWarmInNet).
//
// A pool of a single run (Config.OneRun) has one namespace, whatever the
// key: the self-test's jail is in it first (the bot's own command, whose
// processes have all ended by then: a jail has no capability over the
// namespace, so nothing of it stays), then the run's. It makes no spare:
// each would be one more pasta to start and, at the end, to wait for,
// which takes longer than its start.
type netPool struct {
	cfg    netConfig
	idle   time.Duration
	oneRun bool

	mu         sync.Mutex
	nets       map[string]*netEntry
	spare      *runNS
	spareTimer *time.Timer
	making     chan struct{} // closed once the spare being made is in place or failed; nil when none is
	closed     bool
}

type netEntry struct {
	ready chan struct{} // closed once ns or err is set
	ns    *runNS
	err   error
	refs  int         // jails holding a lease
	timer *time.Timer // armed while refs is 0
}

func newNetPool(cfg netConfig, oneRun bool) *netPool {
	return &netPool{cfg: cfg, idle: netIdle, oneRun: oneRun, nets: map[string]*netEntry{}}
}

// netLease is a jail's hold on its run's namespace. A nil lease (network
// none or host) starts processes where the bot is and holds nothing.
type netLease struct {
	p    *netPool
	key  string
	e    *netEntry
	once sync.Once
}

// lease returns a hold on run's namespace, made first if it has none.
// A nil pool (network none or host) returns a nil lease.
func (p *netPool) lease(run string) (*netLease, error) {
	if p == nil {
		return nil, nil
	}
	if p.oneRun {
		run = ""
	}
	p.mu.Lock()
	e, ok := p.nets[run]
	if !ok {
		e = &netEntry{ready: make(chan struct{})}
		p.nets[run] = e
	}
	e.refs++
	if e.timer != nil {
		e.timer.Stop()
		e.timer = nil
	}
	p.mu.Unlock()
	if !ok {
		e.ns, e.err = p.takeSpare()
		e.err = networkError(e.err)
		close(e.ready)
	}
	<-e.ready
	if e.err != nil {
		p.mu.Lock()
		e.refs--
		if p.nets[run] == e {
			delete(p.nets, run) // the next jail tries afresh
		}
		p.mu.Unlock()
		return nil, e.err
	}
	return &netLease{p: p, key: run, e: e}, nil
}

// do runs f, which starts a process, so that the process is born in the
// lease's namespace; without one, where the bot is.
func (l *netLease) do(f func()) error {
	if l == nil {
		f()
		return nil
	}
	return l.e.ns.do(l.p.cfg.host, f)
}

// enter is the command line prefix that starts a program inside the
// lease's namespace (a bot that is not root), or nil where do suffices.
func (l *netLease) enter() []string {
	if l == nil {
		return nil
	}
	return l.e.ns.enter
}

// release gives the hold back; the namespace ends netIdle after its last
// hold is given back unless a jail takes one again. Idempotent.
func (l *netLease) release() {
	if l == nil {
		return
	}
	l.once.Do(func() {
		p := l.p
		p.mu.Lock()
		defer p.mu.Unlock()
		if l.e.refs--; l.e.refs == 0 && p.nets[l.key] == l.e {
			e := l.e
			e.timer = time.AfterFunc(p.idle, func() { p.expire(l.key, e) })
		}
	})
}

// takeSpare returns the spare namespace, or a new one when there is none
// ready, and has the next spare made.
func (p *netPool) takeSpare() (*runNS, error) {
	p.mu.Lock()
	n := p.spare
	p.spare = nil
	if p.spareTimer != nil {
		p.spareTimer.Stop()
	}
	refill := p.making == nil && !p.closed && !p.oneRun
	if refill {
		p.making = make(chan struct{})
	}
	p.mu.Unlock()
	if refill {
		go p.makeSpare()
	}
	if n != nil {
		return n, nil
	}
	return newRunNS(p.cfg)
}

// makeSpare makes the pool's spare namespace.
func (p *netPool) makeSpare() {
	n, err := newRunNS(p.cfg)
	p.mu.Lock()
	defer p.mu.Unlock()
	close(p.making)
	p.making = nil
	if err != nil {
		return // the next run makes its own, and tries again after
	}
	if p.closed || p.spare != nil {
		go n.close()
		return
	}
	p.spare = n
	p.spareTimer = time.AfterFunc(p.idle, func() {
		p.mu.Lock()
		unused := p.spare == n
		if unused {
			p.spare = nil
		}
		p.mu.Unlock()
		if unused {
			n.close()
		}
	})
}

// expire ends e unless a jail took a hold on it meanwhile.
func (p *netPool) expire(key string, e *netEntry) {
	p.mu.Lock()
	if e.refs > 0 || p.nets[key] != e {
		p.mu.Unlock()
		return
	}
	delete(p.nets, key)
	p.mu.Unlock()
	e.ns.close()
}

// closeIdle ends every namespace no jail is in, and the spare, and makes
// no spare after; the others end after their last jail, as before. With
// wait, it returns once their pastas are reaped; without, once they are
// killed.
func (p *netPool) closeIdle(wait bool) {
	if p == nil {
		return
	}
	var idle []*runNS
	p.mu.Lock()
	p.closed = true
	if p.spare != nil {
		p.spareTimer.Stop()
		idle = append(idle, p.spare)
		p.spare = nil
	}
	for k, e := range p.nets {
		if e.refs == 0 {
			if e.timer != nil {
				e.timer.Stop()
			}
			delete(p.nets, k)
			idle = append(idle, e.ns)
		}
	}
	p.mu.Unlock()
	// At once: each waits for its pasta to be reaped, which takes tens of
	// milliseconds (its tap device goes).
	var wg sync.WaitGroup
	for _, n := range idle {
		wg.Go(func() { n.end(wait) })
	}
	wg.Wait()
}

// initNetwork sets s's network mode from cfg; for public it finds pasta
// and keeps the bot's own namespace to come back to (netPool).
func (s *Sandbox) initNetwork(cfg Config) error {
	s.network = cfg.Network.orDefault()
	switch s.network {
	case NetworkNone, NetworkHost:
		return nil
	case NetworkPublic:
	default:
		return fmt.Errorf("sandbox: network %q: write public, none or host", cfg.Network)
	}
	pasta, err := findTool(cfg.Pasta, "pasta", cfg.PATH, PastaFix)
	if err != nil {
		return networkError(err)
	}
	nc := netConfig{pasta: pasta, allow: cfg.NetworkAllow}
	if os.Geteuid() != 0 {
		// Each run's namespaces have a holder (network_user.go), which
		// jails enter through nsenter.
		if nc.nsenter, err = findTool(cfg.Nsenter, "nsenter", cfg.PATH, NsenterFix); err != nil {
			return networkError(err)
		}
		if _, err := os.Executable(); err != nil {
			return networkError(fmt.Errorf("sandbox: the bot's own program, which holds each run's namespaces: %w", err))
		}
	}
	if nc.host, err = openOwnNetns(); err != nil {
		return err
	}
	s.nets = newNetPool(nc, cfg.OneRun)
	return nil
}

// PastaFix is how to install pasta, for messages that ask for it.
const PastaFix = "install passt, which has pasta (Debian and Ubuntu: apt-get install passt; Fedora: dnf install passt; " +
	"or run scripts/install-sandbox.sh), or set sandbox.network: none (loopback only)"

// NsenterFix is how to install nsenter, which a bot that is not root
// needs for network public.
const NsenterFix = "install util-linux, which has nsenter (Debian and Ubuntu: apt-get install util-linux), " +
	"or set sandbox.network: none (loopback only)"
