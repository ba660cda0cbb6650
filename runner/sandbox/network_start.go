package sandbox

import (
	"fmt"
	"slices"
	"time"
)

// The hooks of jail starts into the run's network namespace (network
// public): a bwrap must be born inside it, as bwrap can make a network
// namespace but join none.

// startColdInNet starts a cold jail (startCold) inside its run's
// namespace, holding it until the jail ends.
func (j *Jail) startColdInNet(c Cmd, argv, opts []string, waitDelay time.Duration) (p *proc, err error) {
	lease, err := j.Sandbox.nets.lease(j.Run)
	if err != nil {
		return nil, fmt.Errorf("sandbox: run %q: %w", c.Argv[0], err)
	}
	if derr := lease.do(func() { p, err = j.startCold(c, argv, opts, waitDelay, lease.enter()) }); derr != nil {
		err = derr
	}
	if err != nil {
		lease.release()
		return nil, err
	}
	p.js.net = lease
	return p, nil
}

// startPipedInNet starts a prewarmed jail's bwrap (startPiped) inside the
// namespace of run, holding it until the jail ends or is discarded.
func (s *Sandbox) startPipedInNet(run string, argv, env []string) (sp *spare, err error) {
	lease, err := s.nets.lease(run)
	if err != nil {
		return nil, err
	}
	if derr := lease.do(func() { sp, err = s.startPiped(slices.Concat(lease.enter(), argv), env, 0) }); derr != nil {
		err = derr
	}
	if err != nil {
		lease.release()
		return nil, err
	}
	sp.js.net = lease
	return sp, nil
}

// takeSpare is a spare jail for a Run of run, or nil. The Sandbox's own
// spares are started before anyone knows their run, so in the bot's
// namespace: with network public a jail takes one of its run's spares
// instead, started inside the run's namespace (netPool.spareJail).
func (s *Sandbox) takeSpare(run string) *spare {
	if s.nets != nil {
		return s.nets.spareJail(run)
	}
	return s.spares.take()
}
