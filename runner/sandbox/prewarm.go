package sandbox

import (
	"os"
	"slices"
	"sync"
	"time"
)

// A prewarmed jail is a bwrap started before the Run that needs it: bwrap
// makes the node's namespaces and mounts while the bot does other work
// (the engine checkpoints the node before), then waits on its block
// descriptor, which it reads after the last mount and before it starts
// anything of the node. A Run of the same Cmd (prewarmKey) adopts it
// without planning its own jail: only the handshake and the node's own
// program are left on the node's critical path.
//
// Its bwrap is started for the node, its argv on the command line and
// its bind sources as descriptors, so the node's exec stays off the
// critical path, as the cgroup join does (jailStart.prepare moves the
// sandbox's first process in ahead). bench/chain's
// sandbox-added-ms/node read 2.35-2.91 against 3.63-4.39 when prewarmed
// jails were spares (a bwrap started ahead of any request, given its
// options on a pipe; three alternated runs each, on a tmpfs). The plan
// and the start run on a goroutine of their own, as Prewarm must return
// at once (the engine calls it before the checkpoint); the Run that
// adopts the jail waits for them if they are not done yet.
//
// The bind sources are opened by that plan, without following links,
// and bwrap binds what they are then (binder): a link planted after that
// changes nothing. What else the plan reads of the disk (which optional
// binds exist, the masks, the workspace's git files) is as it was then
// too: the Run does not look again.
const (
	// maxPrewarmed bounds the prewarmed jails a Sandbox holds; the oldest
	// goes first.
	maxPrewarmed = 4
	// prewarmTTL is how long a prewarmed jail waits for its Run.
	prewarmTTL = 30 * time.Second
)

// prewarmed is one jail waiting for the Run it was made for.
type prewarmed struct {
	key []string // its Cmd's prewarmKey: the match
	// w is the jail, once ready is closed; nil if it could not start.
	w     *warmJail
	ready chan struct{}
	// made are directories the plan created for this jail (a stage
	// directory): removed again, when still empty, if no Run adopts it.
	made  []string
	timer *time.Timer
}

// prewarmPool holds a Sandbox's prewarmed jails.
type prewarmPool struct {
	ttl    time.Duration // prewarmTTL; tests shorten it
	mu     sync.Mutex
	list   []*prewarmed
	closed bool
}

// Prewarm prepares the jail of c, a Run expected soon, and returns at
// once: on a goroutine of its own it plans the mounts and starts c's
// bwrap, which makes them. A Run of an equal Cmd (the same argv,
// environment, directory and jail: prewarmKey) adopts it, waiting for
// that start if it is not done yet; anything else leaves it to expire
// after prewarmTTL. Prewarm does nothing without a jail, or for a Cmd
// with stdin. c's writers are not used.
func Prewarm(c Cmd) {
	j := c.Jail
	if j == nil || len(c.Argv) == 0 {
		return
	}
	key, ok := prewarmKey(c)
	if !ok {
		return
	}
	c.Argv, c.Env = slices.Clone(c.Argv), slices.Clone(c.Env)
	pw := &prewarmed{key: key, ready: make(chan struct{})}
	go j.prewarm(c, pw)
	j.Sandbox.prewarm.add(pw)
}

// prewarm makes pw's jail for c and closes pw.ready: pw.w is the jail,
// waiting for its Run, or nil when it could not start (the Run then
// starts afresh). The directories the plan makes (a stage directory) are
// pw.made, removed again if no Run adopts the jail.
func (j *Jail) prewarm(c Cmd, pw *prewarmed) {
	defer close(pw.ready)
	made := missingDirs([]string{j.Workspace, j.Stage, j.ManagedRoots})
	if pw.w = j.warm(c); pw.w == nil {
		removeEmpty(made)
		return
	}
	pw.made = made
}

// warm plans c's jail, as start does, and starts its bwrap as a cold
// start would (options and argv on its command line, the node's
// environment as its own, never on the command line, which any process
// may read); nil when it cannot.
func (j *Jail) warm(c Cmd) *warmJail {
	s := j.Sandbox
	path, err := findProgram(c)
	if err != nil {
		return nil
	}
	argv := slices.Clone(c.Argv)
	argv[0] = path
	in := j.jailed(c, argv)
	opts, files, err := j.options(in.env, in.dir, path)
	if err != nil {
		return nil
	}
	defer closeAll(files...)
	c.Env, argv = in.env, in.argv
	cmdline, optsFiles, err := bwrapArgv(s.bwrap, opts, argv, firstBindFD+len(files))
	if err != nil {
		return nil
	}
	defer closeAll(optsFiles...)
	// bwrap makes the jail at once, so it cannot be moved into the
	// cgroups before it forks: it stays out of them, as a cold start's
	// does (no headroom), and prepare moves the sandbox's first process
	// in.
	w, err := s.startWarmInNet(j.Run, cmdline, c.Env, slices.Concat(files, optsFiles)...)
	if err != nil {
		return nil
	}
	// Off the node's critical path too: the cgroup join, which can wait
	// for an RCU grace period.
	if err := w.js.prepare(); err != nil {
		w.discard()
		return nil
	}
	return w
}

// add holds pw until a Run adopts it or it expires.
func (p *prewarmPool) add(pw *prewarmed) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		pw.discard()
		return
	}
	var evicted *prewarmed
	if len(p.list) >= maxPrewarmed {
		evicted = p.list[0]
		p.list = slices.Delete(p.list, 0, 1)
	}
	p.list = append(p.list, pw)
	pw.timer = time.AfterFunc(p.ttl, func() { p.expire(pw) })
	p.mu.Unlock()
	if evicted != nil {
		evicted.timer.Stop()
		evicted.discard()
	}
}

// take returns the jail prewarmed with exactly key, or nil. One that
// died while it waited (killed, or its mounts failed) is discarded, and
// the Run starts afresh; the directories made for it are the Run's now.
func (p *prewarmPool) take(key []string) *warmJail {
	p.mu.Lock()
	i := slices.IndexFunc(p.list, func(pw *prewarmed) bool { return slices.Equal(pw.key, key) })
	if i < 0 {
		p.mu.Unlock()
		return nil
	}
	pw := p.list[i]
	p.list = slices.Delete(p.list, i, i+1)
	p.mu.Unlock()
	pw.timer.Stop()
	<-pw.ready
	if pw.w == nil {
		return nil
	}
	if pw.w.exited() {
		pw.w.discard()
		return nil
	}
	return pw.w
}

// expire discards pw if no Run took it.
func (p *prewarmPool) expire(pw *prewarmed) {
	p.mu.Lock()
	i := slices.Index(p.list, pw)
	if i >= 0 {
		p.list = slices.Delete(p.list, i, i+1)
	}
	p.mu.Unlock()
	if i >= 0 {
		pw.discard()
	}
}

// close discards every prewarmed jail; none is held after.
func (p *prewarmPool) close() {
	p.mu.Lock()
	p.closed = true
	list := p.list
	p.list = nil
	p.mu.Unlock()
	for _, pw := range list {
		pw.timer.Stop()
		pw.discard()
	}
}

// discard ends the jail, once started, and removes what was made for it.
func (pw *prewarmed) discard() {
	<-pw.ready
	if pw.w != nil {
		pw.w.discard()
	}
	removeEmpty(pw.made)
}

// missingDirs are those of dirs that do not exist yet.
func missingDirs(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if _, err := os.Lstat(d); os.IsNotExist(err) {
			out = append(out, d)
		}
	}
	return out
}

// removeEmpty removes each of dirs that is an empty directory.
func removeEmpty(dirs []string) {
	for _, d := range slices.Backward(dirs) {
		_ = os.Remove(d) // fails, as it should, on anything not empty
	}
}
