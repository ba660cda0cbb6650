package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/policy"
	"github.com/kilroy-bot/kilroy-bot/runner/caches"
	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

// ErrUsage marks errors that are the user's to fix before anything ran
// (not a repository, unknown pipeline, invalid config or graph): the
// command exits 2 and nothing in the repository changed.
var ErrUsage = errors.New("usage")

// LocalOptions configure a local run (`kilroy-bot run`).
type LocalOptions struct {
	RepoDir string // any directory inside the repository
	Graph   string // "", a pipeline name, or a repository-relative .dot path
	RunDir  string // "" = <DataDir>/runs/<run-id>
	DataDir string // where run directories go by default
	GitPath string
	Env     EnvInputs

	Listener attractor.Listener // extra listener (the report recorder)
	// Answers answer wait.human nodes up front (--answer NODE=LABEL);
	// checked against the pipeline before anything runs.
	Answers     map[string]string
	Interviewer attractor.Interviewer // the other wait.human nodes
	Agent       attractor.Agent       // codergen nodes; nil = none configured
	// NewAgent, when set, builds the run's agent once the artifact policy
	// is resolved, so agent processes get the same policy environment as
	// tool nodes; it wins over Agent.
	NewAgent AgentFactory
	Live     io.Writer // progress lines; nil for none
	Now      func() time.Time
	// Store keeps the run's checkpoints beyond its run directory (the
	// server's database); nil for none.
	Store StateStore
	// KeepWorktree leaves the worktree in place when Execute returns: the
	// caller removes it or parks it for another run (the server's pool of
	// warm worktrees).
	KeepWorktree bool
	// Images say which image the nodes run in and where it comes from.
	Images ImageOptions
	// ChargeUsage, when set, hears every increment of the run's agent
	// spend and may refuse more (the server's daily budget per
	// installation): the agent then stops, budget_exhausted.
	ChargeUsage func(attractor.Usage) error
	// AllowUsage, when set, is asked before every agent step whether the
	// daily budget lets it go on; DailyBudgetKey names that budget.
	AllowUsage     func() error
	DailyBudgetKey string
	// CapBudgets, when set, lowers the run's agent budgets to the
	// operator's (agents.budgets of a local --agents file) and says what
	// it lowered; the server caps them before the run instead.
	CapBudgets func(*policy.Limits) []string
}

// Prepared is a run ready to execute: worktree made, policy resolved.
type Prepared struct {
	RunID    string
	Dir      RunDir
	Pipeline *attractor.Pipeline
	Name     string // pipeline name
	Branch   string
	BaseSHA  string
	RepoDir  string
	Warnings attractor.Diagnostics
	// Unseen lists the files of .kilroy/ whose edits the run does not see
	// (modified or untracked in the repository's working tree: a run reads
	// HEAD); set by PrepareLocal.
	Unseen []string

	git        *gitops.Git
	policy     *policy.Resolved
	cp         Checkpoint
	resumeFrom *attractor.State // nil for a new run
	journal    *journal         // while executing
	store      StateStore
	// checkpointed, when set, hears every checkpoint request once
	// checkpoint.json has it (tests compare the two).
	checkpointed func(attractor.CheckpointRequest)
	// ownsBranch: this run created Branch; it did not exist before the
	// worktree was made. Only such a branch is ever deleted again.
	ownsBranch bool
	// caches is the directory of the run's repository caches
	// (EnvInputs.Caches).
	caches string
	// usage meters the run's agents while it executes.
	usage *attractor.UsageMeter
	// dropUnusedBranch makes cleanup delete the owned branch when it got
	// no checkpoint: set for local runs, whose branch is in the user's
	// repository. (A server run's branch is pushed once more at its end.)
	dropUnusedBranch bool
}

// RunLocal prepares and executes a pipeline on a local repository's HEAD.
func RunLocal(ctx context.Context, o LocalOptions) (*Prepared, *attractor.RunResult, error) {
	p, err := PrepareLocal(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	res, err := p.Execute(ctx, o)
	return p, res, err
}

// PrepareLocal does everything before the first node: it refuses bad
// input with ErrUsage and touches nothing of the user's until it has
// validated the pipeline.
func PrepareLocal(ctx context.Context, o LocalOptions) (*Prepared, error) {
	now := nowFunc(o.Now)
	runID := ulid.MustNew(ulid.Timestamp(now()), ulid.DefaultEntropy()).String()
	dir, err := runDirFor(o, runID)
	if err != nil {
		return nil, err
	}
	_, statErr := os.Stat(string(dir))
	existed := statErr == nil
	p, err := prepareIn(ctx, o, runID, dir)
	if err != nil {
		// newGit already made the git HOME in the run directory; a refused
		// run must leave it as it was (missing or empty), or the same
		// command, once the mistake is fixed, would be told the directory
		// belongs to another run.
		dir.clear(existed)
		return nil, err
	}
	p.dropUnusedBranch = true
	// Only a hint for the user: a failure to list them must not stop the run.
	p.Unseen, _ = p.git.Uncommitted(ctx, p.RepoDir, ".kilroy")
	return p, nil
}

func prepareIn(ctx context.Context, o LocalOptions, runID string, dir RunDir) (*Prepared, error) {
	git, err := newGit(o.GitPath, o.Env, dir)
	if err != nil {
		return nil, err
	}
	repo, head, err := checkRepo(ctx, git, o.RepoDir)
	if err != nil {
		return nil, err
	}
	sel, err := selectLocal(ctx, git, repo, head, o.Graph)
	if err != nil {
		return nil, err
	}
	if err := (Answers{ByNode: o.Answers}).Check(sel.Pipeline); err != nil {
		return nil, err
	}
	env := o.Env
	if env.Caches == "" && o.DataDir != "" {
		env.Caches = caches.LocalDir(filepath.Join(o.DataDir, CachesDir), repo)
	}
	// The image's tag is resolved while the worktree is checked out: a
	// registry's round trips are off the run's critical path.
	pin := o.Images.StartPin(ctx, sel)
	p, err := Assemble(ctx, git, runID, dir, repo, head, sel, env)
	if err != nil {
		pin.Stop()
		return nil, err
	}
	if err := p.PinImage(pin); err != nil {
		p.release(ctx, true)
		return nil, err
	}
	if im := p.Image(); im != nil && o.Env.Sandbox == nil {
		p.release(ctx, true)
		return nil, fmt.Errorf("%w: image %s: nodes run in an image only in the sandbox (bubblewrap), which is off here; "+
			"run with --image host, or where bubblewrap works", ErrUsage, im.Ref)
	}
	return p, nil
}

// CachesDir is the directory of the data dir that holds the repositories'
// caches (runner/caches).
const CachesDir = "caches"

// runCaches is the cache directory of a run: env's, else the run's own
// (in its directory, removed with it).
func runCaches(env EnvInputs, dir RunDir) string {
	if env.Caches != "" {
		return env.Caches
	}
	return filepath.Join(string(dir), CachesDir)
}

// Assemble prepares run runID of sel in dir: it makes the run directory and
// a worktree of repo at start on the run branch, and resolves the selected
// pipeline's artifact policy there with env's host environment and caches.
// git is the run's own (its HOME in dir). Local runs start at HEAD; pull
// request runs at the PR head in the mirror, whatever commit the pipeline
// was read from.
func Assemble(ctx context.Context, git *gitops.Git, runID string, dir RunDir, repo, start string, sel *Selection, env EnvInputs) (*Prepared, error) {
	return AssembleFrom(ctx, git, runID, dir, repo, start, sel, env, nil)
}

// MakeWorktree makes the worktree of repo at dir with branch checked out
// at startSHA, as gitops.Git.AddWorktree does.
type MakeWorktree func(ctx context.Context, repo, dir, branch, startSHA string) error

// AssembleFrom is Assemble with the worktree made by mk (nil:
// git.AddWorktree); pull request runs take it from the pool of warm
// worktrees.
func AssembleFrom(ctx context.Context, git *gitops.Git, runID string, dir RunDir, repo, start string, sel *Selection, env EnvInputs, mk MakeWorktree) (*Prepared, error) {
	if mk == nil {
		mk = git.AddWorktree
	}
	p := &Prepared{RunID: runID, Dir: dir, Pipeline: sel.Pipeline, Name: sel.Name, RepoDir: repo,
		BaseSHA: start, Branch: gitops.RunBranch(sel.Name, runID), Warnings: sel.diags, git: git,
		caches: runCaches(env, dir)}
	if err := p.makeRunDir(ctx, sel.source, mk); err != nil {
		p.release(ctx, true)
		return nil, err
	}
	if err := p.resolvePolicy(sel.Config, env.Host); err != nil {
		p.release(ctx, true)
		return nil, err
	}
	p.cp = Checkpoint{Version: checkpointVersion, RunID: runID, Pipeline: sel.Name, GraphPath: sel.GraphPath,
		RepoDir: repo, RunDir: string(dir), Branch: p.Branch, BaseSHA: start, CommitSHA: start, Policy: p.policy, PolicyHash: p.policy.Hash(),
		Limits: sel.Config.Limits}
	return p, nil
}

func nowFunc(now func() time.Time) func() time.Time {
	if now == nil {
		return time.Now
	}
	return now
}

func runDirFor(o LocalOptions, runID string) (RunDir, error) {
	d := o.RunDir
	if d == "" {
		if o.DataDir == "" {
			return "", fmt.Errorf("%w: no run directory: pass --run-dir or --data-dir", ErrUsage)
		}
		d = filepath.Join(o.DataDir, "runs", runID)
	}
	abs, err := filepath.Abs(d)
	if err != nil {
		return "", fmt.Errorf("%w: run directory %q: %v", ErrUsage, d, err)
	}
	if entries, err := os.ReadDir(abs); err == nil && len(entries) > 0 {
		return "", fmt.Errorf("%w: run directory %s is not empty: pass a new --run-dir, or `kilroy-bot resume %s` to continue that run", ErrUsage, abs, abs)
	}
	return RunDir(abs), nil
}

func newGit(gitPath string, env EnvInputs, dir RunDir) (*gitops.Git, error) {
	return gitops.New(gitops.Options{
		GitPath: gitPath, PATH: env.Host["PATH"], HomeDir: dir.GitHome(), RepoIdentity: true,
	})
}

func checkRepo(ctx context.Context, git *gitops.Git, repoDir string) (root, head string, err error) {
	if repoDir == "" {
		repoDir = "."
	}
	root, err = git.RepoRoot(ctx, repoDir)
	if err != nil {
		return "", "", fmt.Errorf("%w: %v", ErrUsage, err)
	}
	head, err = git.HeadSHA(ctx, root)
	if errors.Is(err, gitops.ErrNoCommit) {
		return "", "", fmt.Errorf("%w: %s has no commit yet: a run starts from HEAD, so commit your files first (git add -A && git commit -m 'First commit')", ErrUsage, root)
	}
	if err != nil {
		return "", "", fmt.Errorf("%w: %v", ErrUsage, err)
	}
	dirty, err := git.IsIndexDirty(ctx, root)
	if err != nil {
		return "", "", err
	}
	if dirty {
		return "", "", fmt.Errorf("%w: %s has staged changes that HEAD does not include: commit or unstage them (git commit, or git restore --staged .) so the run tests what you mean", ErrUsage, root)
	}
	return root, head, nil
}

func (p *Prepared) makeRunDir(ctx context.Context, source []byte, mk MakeWorktree) error {
	if err := os.MkdirAll(p.Dir.Nodes(), 0o755); err != nil {
		return fmt.Errorf("create run directory: %w", err)
	}
	if err := os.WriteFile(p.Dir.Graph(), source, 0o644); err != nil {
		return fmt.Errorf("write graph.dot: %w", err)
	}
	tip, err := p.git.BranchTip(ctx, p.RepoDir, p.Branch)
	if err != nil {
		return err
	}
	p.ownsBranch = tip == ""
	return mk(ctx, p.RepoDir, p.Dir.Worktree(), p.Branch, p.BaseSHA)
}

func (p *Prepared) resolvePolicy(cfg *policy.RepoConfig, hostEnv map[string]string) error {
	bound := caches.Bound(p.caches)
	r, err := policy.Resolve(policy.ResolveInput{
		Policy: cfg.ArtifactPolicy, Repo: os.DirFS(p.Dir.Worktree()), RunDir: string(p.Dir), HostEnv: hostEnv,
		Caches: sandbox.CacheEnv(bound), MavenRepo: sandbox.CacheMavenRepo(bound),
	})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	p.policy = r
	return nil
}

// cleanup removes the worktree when the run ends; the run branch and run
// directory stay so the checkpoints can be inspected. Only a local run's
// branch that got no checkpoint goes too (the run failed or was stopped
// before its first node was committed): it holds nothing, and the user's
// repository is left as it was before the run.
func (p *Prepared) cleanup(ctx context.Context) {
	p.release(ctx, p.dropUnusedBranch)
}

// release removes the run's worktree and, with dropUnused, the branch the
// run created if it still points at the commit the run started from. A
// run that assemble gives up on releases with dropUnused: nothing ran.
func (p *Prepared) release(ctx context.Context, dropUnused bool) {
	ctx = context.WithoutCancel(ctx)
	if err := p.git.RemoveWorktree(ctx, p.RepoDir, p.Dir.Worktree()); err != nil {
		return // the branch may still be checked out there
	}
	if dropUnused && p.ownsBranch {
		// Best effort, like the worktree removal: a branch that could not
		// be deleted is an empty run branch, not lost work.
		_, _ = p.git.DeleteUnusedRunBranch(ctx, p.RepoDir, p.Branch, p.BaseSHA)
	}
}
