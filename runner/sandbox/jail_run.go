package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"time"
)

// start starts argv in j, released by the caller through the returned
// proc's handshake. A request that fits a prewarmed jail (prewarmKey)
// takes the one prewarmed for it (Prewarm), whose mounts are made
// already; anything else starts a fresh bwrap: the cold path.
//
// There are no jails started ahead of any request any more (spares, a
// bwrap waiting to read its options from a pipe): a jail's binds are
// descriptors (binder), which bwrap must inherit when it starts.
//
// argv, c's environment and directory name host paths; the jail gets them
// as it shows them (Jail.jailed).
func (j *Jail) start(c Cmd, argv []string, waitDelay time.Duration) (*proc, error) {
	s := j.Sandbox
	if key, ok := prewarmKey(c); ok && isDirOrEmpty(c.Dir) && pipedOutputs(c.Stdout, c.Stderr) {
		if sp := s.prewarm.take(key); sp != nil {
			p := sp.attach(c, time.Now())
			p.prewarmed = true
			return p, nil
		}
	}
	in := j.jailed(c, argv)
	opts, files, err := j.options(in.env, in.dir, argv[0])
	if err != nil {
		return nil, fmt.Errorf("sandbox: run %q: %w", c.Argv[0], err)
	}
	defer closeAll(files...)
	c.Env, argv = in.env, in.argv
	return j.startColdInNet(c, argv, opts, files, waitDelay)
}

// startCold starts a fresh bwrap that runs argv with opts (bwrapArgv),
// and the bind sources files, through enter if not empty (netLease.enter):
// nsenter execs bwrap with the descriptors it inherited, at the same
// numbers.
func (j *Jail) startCold(c Cmd, argv, opts []string, files []*os.File, waitDelay time.Duration, enter []string) (*proc, error) {
	js, err := newJailStart(j.Sandbox, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: run %q: %w", c.Argv[0], err)
	}
	full, optsFiles, err := bwrapArgv(j.Sandbox.bwrap, opts, argv, firstBindFD+len(files))
	if err != nil {
		js.abort()
		return nil, fmt.Errorf("sandbox: run %q: %w", c.Argv[0], err)
	}
	defer closeAll(optsFiles...)
	full = slices.Concat(enter, full)
	cmd := exec.Command(full[0])
	cmd.Args = full
	cmd.ExtraFiles = slices.Concat(js.childFiles(), files, optsFiles)
	p, err := startCmd(c, cmd, waitDelay)
	if err != nil {
		js.abort()
		return nil, err
	}
	p.js = js
	return p, nil
}
