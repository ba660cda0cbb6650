package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/policy"
	"github.com/kilroy-bot/kilroy-bot/runner/caches"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

// Execute runs the prepared pipeline from its start, or from the
// checkpoint when resuming, and removes the worktree when the run ends
// (unless o.KeepWorktree). The error reports a run that could not start;
// a failed pipeline is a result.
func (p *Prepared) Execute(ctx context.Context, o LocalOptions) (*attractor.RunResult, error) {
	if !o.KeepWorktree {
		defer p.cleanup(ctx)
	}
	// limits.run_timeout bounds each execution (a resume gets it afresh);
	// the engine ends the run as canceled when the deadline passes.
	if d := p.cp.Limits.RunTimeout; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, d, fmt.Errorf("limits.run_timeout of %s reached (raise it in %s)", d, ConfigPath))
		defer cancel()
	}
	progFile, err := os.OpenFile(p.Dir.Progress(), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open progress.ndjson: %w", err)
	}
	defer progFile.Close()
	jr, err := p.openJournal()
	if err != nil {
		return nil, err
	}
	defer jr.close()
	p.journal, p.store = jr, o.Store
	if p.store != nil {
		if err := p.storeStart(ctx); err != nil {
			return nil, err
		}
	}
	releaseCaches, err := caches.Open(p.caches)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", p.RunID, err)
	}
	defer releaseCaches()
	env, releaseImage, err := p.imageEnv(ctx, o)
	if err != nil {
		return nil, err
	}
	defer releaseImage()
	env.Caches = p.caches
	o.Env = env
	prog := NewProgress(progFile, o.Live)
	if err := prog.RunStarted(p.RunID, p.Name, p.Branch, p.BaseSHA, string(p.Dir)); err != nil {
		return nil, err
	}
	host := &nodeHost{
		git: p.git, worktree: p.Dir.Worktree(), branch: p.Branch, baseSHA: p.BaseSHA,
		policy: p.policy, env: env, repoDir: p.RepoDir, runDir: p.Dir, onCheckpoint: p.saveCheckpoint,
	}
	agent, err := p.agent(o)
	if err != nil {
		return nil, err
	}
	p.usage = p.newMeter(o)
	cfg := attractor.RunConfig{
		RunID: p.RunID, Workspace: p.Dir.Worktree(), NodeWorkspace: nodeWorkspace(env.Sandbox), RunDir: p.Dir.Nodes(), Host: host,
		Listener: attractor.Listeners{prog, o.Listener}, Agent: agent, Interviewer: o.interviewer(),
		Usage: p.usage,
	}
	if p.resumeFrom == nil {
		return attractor.Run(ctx, p.Pipeline, cfg)
	}
	return attractor.Resume(ctx, p.Pipeline, cfg, p.resumeFrom)
}

// openJournal opens the run's checkpoint journal; a new run first writes
// its checkpoint.json. From here on p.cp.State is the runner's own copy
// of the run's state, which every checkpoint's delta moves on for
// checkpoint.json.
func (p *Prepared) openJournal() (*journal, error) {
	p.cp.State = copyState(p.resumeFrom)
	if p.resumeFrom == nil {
		if err := p.Dir.writeCheckpoint(p.cp); err != nil {
			return nil, err
		}
	}
	return openJournal(p.Dir, p.cp.Seq)
}

// copyState is a copy of st (nil: the empty state) that can be changed
// without changing st.
func copyState(st *attractor.State) *attractor.State {
	c := &attractor.State{}
	if st != nil {
		c.Apply(attractor.DiffState(nil, st))
	}
	return c
}

// saveCheckpoint appends the checkpoint to the journal after every
// checkpoint commit, rewrites checkpoint.json with the state it leads to,
// then hands the record to the store, if any.
func (p *Prepared) saveCheckpoint(ctx context.Context, sha string, req attractor.CheckpointRequest) error {
	rec, err := p.journal.append(sha, req.Delta)
	if err != nil {
		return err
	}
	p.cp.State.Apply(req.Delta)
	p.cp.CommitSHA, p.cp.UpdatedAt, p.cp.Seq = rec.SHA, rec.At, rec.Seq
	p.noteUsage()
	if err := p.Dir.writeCheckpoint(p.cp); err != nil {
		return err
	}
	if p.store != nil {
		p.store.Checkpointed(ctx, p.RunID, rec)
	}
	if p.checkpointed != nil {
		p.checkpointed(req)
	}
	return nil
}

// interviewer answers from the answers given up front, then asks.
func (o LocalOptions) interviewer() attractor.Interviewer {
	if len(o.Answers) == 0 {
		return o.Interviewer
	}
	return Answers{ByNode: o.Answers, Fallback: o.Interviewer}
}

// AgentFactory builds the coding agent of one run from the run's
// resolved artifact-policy environment, the directory of its managed
// roots and its cache directory (both writable inside the sandbox), and
// the run's sandbox (on the run's image, when it has one).
type AgentFactory func(policyEnv map[string]string, managedRoots, caches string, sb *sandbox.Sandbox) (attractor.Agent, error)

func (p *Prepared) agent(o LocalOptions) (attractor.Agent, error) {
	if o.NewAgent == nil {
		return o.Agent, nil
	}
	a, err := o.NewAgent(p.policy.Env, filepath.Join(string(p.Dir), policy.ManagedRootsDir), caches.Bound(p.caches), o.Env.Sandbox)
	if err != nil {
		return nil, fmt.Errorf("run %s: coding agents: %w", p.RunID, err)
	}
	return a, nil
}
