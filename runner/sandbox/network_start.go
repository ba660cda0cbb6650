package sandbox

import (
	"fmt"
	"os"
	"slices"
	"time"
)

// The hooks of jail starts into the run's network namespace (network
// public): a bwrap must be born inside it, as bwrap can make a network
// namespace but join none. Both a cold start and a prewarmed jail's start
// (Jail.prewarm) go through it, with the same descriptors at the same
// numbers (the handshake's, the bind sources', the options file): from a
// thread inside the namespace (root), exec.Cmd's ExtraFiles as they are;
// through nsenter (not root), which closes none of what it inherits and
// execs bwrap with them.

// startColdInNet starts a cold jail (startCold) inside its run's
// namespace, holding it until the jail ends.
func (j *Jail) startColdInNet(c Cmd, argv, opts []string, files []*os.File, waitDelay time.Duration) (p *proc, err error) {
	lease, err := j.Sandbox.nets.lease(j.Run)
	if err != nil {
		return nil, fmt.Errorf("sandbox: run %q: %w", c.Argv[0], err)
	}
	if derr := lease.do(func() { p, err = j.startCold(c, argv, opts, files, waitDelay, lease.enter()) }); derr != nil {
		err = derr
	}
	if err != nil {
		lease.release()
		return nil, err
	}
	p.js.net = lease
	return p, nil
}

// startWarmInNet starts a prewarmed jail's bwrap (startWarm) inside the
// namespace of run, holding it until the jail ends or is discarded.
func (s *Sandbox) startWarmInNet(run string, argv, env []string, binds ...*os.File) (w *warmJail, err error) {
	lease, err := s.nets.lease(run)
	if err != nil {
		return nil, err
	}
	if derr := lease.do(func() { w, err = s.startWarm(slices.Concat(lease.enter(), argv), env, 0, binds...) }); derr != nil {
		err = derr
	}
	if err != nil {
		lease.release()
		return nil, err
	}
	w.js.net = lease
	return w, nil
}
