package agent

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/runner/agentrt"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

// cliProgram settles what run starts in jail. Where the jail's image
// cannot run the CLI as it has it (missing, or an npm script without
// node), the CLI runs from the bot's agent runtime when it has the CLI,
// bound read-only into the jail; else the host's copy as the jail can
// take it (HostFallback), as without a runtime. A runtime that cannot
// run in the image fails the node structural before it starts, so before
// any model call, naming both ways out.
func (a *Agent) cliProgram(run *cliRun, jail *sandbox.Jail, env []string, dir string, sel selection) *attractor.Outcome {
	name := run.argv[0]
	missing := jail.ImageRuns(env, dir, name)
	if missing == nil {
		return nil
	}
	host := jail.HostFallback(env, dir, name, a.deps.HostEnv["PATH"])
	rt := a.runtimeFor(host)
	if rt == nil {
		run.argv[0] = host
		return nil
	}
	inv, err := rt.Invocation(name)
	if errors.Is(err, agentrt.ErrNotInRuntime) && host != name {
		inv, err = rt.Invocation(host)
	}
	switch {
	case errors.Is(err, agentrt.ErrNotInRuntime):
		run.argv[0] = host
		return nil
	case err != nil:
		return structural(fmt.Sprintf("agent backend %s: %v", sel.name, err))
	}
	if why := agentrt.Unfit(jail.ImageHas, inv); why != "" {
		image := jail.ImageName()
		return structural(fmt.Sprintf("agent backend %s: `%s` cannot run in image %s (%s), and the bot's agent runtime cannot run there: %s. "+
			"Use an image that has %s and what it needs (`image:` in .kilroy/config.yml, for the repository or the pipeline), "+
			"or a glibc-based image with /bin/sh (Debian, Ubuntu, Fedora and the like), where the bot's agent runtime runs",
			sel.name, name, image, missingWhy(missing), why, filepath.Base(name)))
	}
	run.argv = append(inv.Argv, run.argv[1:]...)
	jail.Binds = append(jail.Binds, inv.Binds...)
	return nil
}

// runtimeFor is the agent runtime a CLI runs from: the configured one,
// else, where the host may say (a local run), the one the host's copy
// of the CLI belongs to.
func (a *Agent) runtimeFor(host string) *agentrt.Runtime {
	if a.rt != nil || !a.deps.DetectRuntime || !filepath.IsAbs(host) {
		return a.rt
	}
	dir := agentrt.Detect(host)
	if dir == "" {
		return nil
	}
	if rt, ok := a.detected.Load(dir); ok {
		return rt.(*agentrt.Runtime)
	}
	rt, err := agentrt.New(dir, a.deps.RuntimeCache)
	if err != nil {
		a.log.Warn("agent runtime not usable", "dir", dir, "err", err)
		return nil
	}
	got, _ := a.detected.LoadOrStore(dir, rt)
	return got.(*agentrt.Runtime)
}

// missingWhy says briefly what the image lacks.
func missingWhy(err error) string {
	var nf *sandbox.NotFoundError
	if errors.As(err, &nf) && nf.Reason != "" {
		return nf.Reason
	}
	return "it is not there"
}
