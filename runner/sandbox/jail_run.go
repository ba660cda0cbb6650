package sandbox

import (
	"fmt"
	"os/exec"
	"slices"
	"time"
)

// start starts argv in j, released by the caller through the returned
// proc's handshake. A request that fits a spare jail (spareOptions) takes
// the jail prewarmed for it (Prewarm), whose mounts are made already, or
// else a spare when the Sandbox has one ready: its bwrap is running
// already, in the node's cgroups, and only reads its options. Anything
// else, or no spare, starts a fresh bwrap: the cold path.
func (j *Jail) start(c Cmd, argv []string, waitDelay time.Duration) (*proc, error) {
	s := j.Sandbox
	opts, err := j.options(c.Env, c.Dir, argv[0])
	if err != nil {
		return nil, fmt.Errorf("sandbox: run %q: %w", c.Argv[0], err)
	}
	if spareOpts, ok := s.spareOptions(c, argv, opts); ok {
		if sp := s.prewarm.take(spareOpts); sp != nil {
			p := sp.attach(c, time.Now())
			p.prewarmed = true
			return p, nil
		}
		if sp := s.takeSpare(j.Run); sp != nil {
			if p, err := sp.launch(c, spareOpts); err == nil {
				return p, nil
			}
			// The spare died while idle (killed from outside): start cold.
		}
	}
	return j.startColdInNet(c, argv, opts, waitDelay)
}

// startCold starts a fresh bwrap with opts and argv on its command line,
// through enter if not empty (netLease.enter).
func (j *Jail) startCold(c Cmd, argv, opts []string, waitDelay time.Duration, enter []string) (*proc, error) {
	js, err := newJailStart(j.Sandbox, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: run %q: %w", c.Argv[0], err)
	}
	full := slices.Concat(enter, coldArgv(j.Sandbox.bwrap, opts, argv))
	cmd := exec.Command(full[0])
	cmd.Args = full
	cmd.ExtraFiles = js.childFiles()
	p, err := startCmd(c, cmd, waitDelay)
	if err != nil {
		js.abort()
		return nil, err
	}
	p.js = js
	return p, nil
}

// coldArgv is the command line of a bwrap that runs argv with options
// opts and the handshake, all given up front.
func coldArgv(bwrap string, opts, argv []string) []string {
	return slices.Concat([]string{bwrap}, opts, handshakeArgs, []string{"--"}, argv)
}
