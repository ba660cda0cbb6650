package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/queue"
	"github.com/kilroy-bot/kilroy-bot/runner"
	"github.com/kilroy-bot/kilroy-bot/runner/caches"
	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
	"github.com/kilroy-bot/kilroy-bot/runner/wtpool"
)

// ConfigCheckName is the check that reports an invalid configuration or
// pipeline on the commit it was read from.
const ConfigCheckName = "kilroy/config"

// GitHub is what deciding an event needs from GitHub, for one
// installation. The composition root adapts the App's installation client
// to it; server sees no go-github type.
type GitHub interface {
	// PullRequest returns pull request number as it is now (head SHA,
	// head repository, base ref, draft, author, state).
	PullRequest(ctx context.Context, repo Repo, number int) (PullRequest, error)
	// PullRequestFiles lists the paths the pull request changes.
	PullRequestFiles(ctx context.Context, repo Repo, number int) ([]string, error)
	// CollaboratorPermission is user's permission (admin, maintain, write,
	// triage, read, none) from the collaborator-permission API.
	CollaboratorPermission(ctx context.Context, repo Repo, user string) (string, error)
	CreateComment(ctx context.Context, repo Repo, number int, body string) error
	AddReaction(ctx context.Context, repo Repo, commentID int64, content string) error
	// ConfigCheck publishes a completed, failed ConfigCheckName check on
	// c.HeadSHA with c's annotations.
	ConfigCheck(ctx context.Context, repo Repo, c ConfigCheck) error
}

// ConfigCheck is a failed `kilroy/config` check: what is wrong and where.
type ConfigCheck struct {
	HeadSHA     string
	Title       string
	Summary     string
	Annotations []ConfigAnnotation
}

// ConfigAnnotation points at one problem in a configuration or pipeline
// file (repository-relative path, 1-based line and column).
type ConfigAnnotation struct {
	Path    string
	Line    int
	Column  int
	Message string
}

// Reporter publishes one run's check runs (`kilroy/<pipeline>` and one per
// verify node). It hears the engine as a listener; the methods below are
// the lifecycle around the engine. Every Reporter must leave every check it
// created or adopted completed: the server always ends with exactly one of
// ActionRequired, Cancel, Fail or Close.
type Reporter interface {
	attractor.Listener
	// Queued creates the run's checks in state queued, when the run is
	// enqueued. It must not create a second set when checks with this
	// run's external ids already exist on the head SHA.
	Queued(ctx context.Context) error
	// Adopt takes over the checks an earlier Reporter of the same run
	// created (at enqueue time, or before a restart), found by their
	// external ids `<run-id>/…`, and creates those missing. ReportTarget's
	// Graph may be nil (a queued run superseded before it loaded its
	// pipeline): then only the checks found are adopted.
	Adopt(ctx context.Context) error
	// ActionRequired completes the summary check action_required: the run
	// waits for a collaborator's approval.
	ActionRequired(ctx context.Context, title, summary string) error
	// Cancel completes every check cancelled with reason ("superseded by
	// <sha>", "cancelled by @user").
	Cancel(ctx context.Context, reason string) error
	// Fail completes every check after an internal error (not a pipeline
	// failure, which Close reports).
	Fail(ctx context.Context, reason string) error
	// PushFailed records, before Close, that the run branch could not be
	// pushed at the end: the summary check then fails, its first line
	// naming the push and reason.
	PushFailed(ctx context.Context, reason string) error
	// Close completes every check with the pipeline's result, after the
	// engine's RunFinished.
	Close(ctx context.Context) error
}

// ReportTarget is the run a Reporter reports.
type ReportTarget struct {
	InstallationID int64
	Repo           string // owner/name
	HeadSHA        string
	PR             int
	Pipeline       string
	RunID          string
	// Graph is the validated pipeline, for its verify-node checks and the
	// summary's graph; nil when it is not known (see Reporter.Adopt).
	Graph *attractor.Pipeline
	// Notes are sentences the summary check shows, such as that the run
	// used the base branch's pipelines although the pull request changes
	// them.
	Notes []string
	// History is what the run did before this execution resumed it, for
	// the checks to show; nil when the run starts from the beginning.
	History *runner.History
	// Image is the image the run's nodes run in; nil for the host jail.
	Image *runner.RunImage
}

// TokenSource makes a repository's git credentials for one run: source is
// called right before each fetch and push and returns a token scoped to
// repo (owner/name); revoke invalidates every token source handed out.
type TokenSource func(ctx context.Context, installationID int64, repo string) (source gitops.TokenSource, revoke func(context.Context) error, err error)

// ServerOptions wire a Server; the composition root provides each.
type ServerOptions struct {
	// DataDir holds mirrors/<owner>/<name>.git, runs/<run-id>/ and the
	// HOME the event handlers' git runs with.
	DataDir string
	Queue   *queue.Queue
	// GitHub returns the API of one installation.
	GitHub func(ctx context.Context, installationID int64) (GitHub, error)
	// NewReporter makes the check reporter of one run.
	NewReporter func(ctx context.Context, t ReportTarget) (Reporter, error)
	// Tokens makes git credentials; required.
	Tokens TokenSource
	// GitPath is the git binary ("" = git in Env.Host's PATH).
	GitPath string
	// Env is what node environments are built from; it must not hold
	// GitHub credentials (git gets those from Tokens, in its own env).
	Env runner.EnvInputs
	// Agent runs codergen nodes; nil means none configured. NewAgent, when
	// set, builds one per run with the run's policy environment instead.
	Agent    attractor.Agent
	NewAgent runner.AgentFactory
	// Caps bound the run and node timeouts repositories configure.
	Caps Caps
	// Daily is the daily agent budget of each installation (budget.go).
	Daily  DailyBudget
	Logger *slog.Logger
	// Pool, when set, keeps the worktrees of ended runs warm for the next
	// run of the same repository (see warm.go); nil: every run checks out
	// a fresh worktree.
	Pool *wtpool.Pool
	// CacheScope is what shares a cache directory under DataDir/caches
	// (sandbox.caches.scope): a repository's runs (the default) or an
	// installation's; never two installations'.
	CacheScope caches.Scope
	// Disk is what runs must leave free on the data dir's filesystem
	// (disk.go); zero: no reserve.
	Disk DiskReserve
	// Images say which image each run's nodes run in: the repository's
	// choice within images.allow, else images.default.
	Images runner.ImageOptions
}

// Server turns accepted deliveries into pull request runs: HandleEvent
// decides an event job (trust, config, pipelines, queued checks, runs to
// enqueue) and HandleRun works one run job. Start the queue with Handlers.
type Server struct {
	o   ServerOptions
	log *slog.Logger
	// mirrorLocks serialise fetches and worktree changes per mirror: each
	// run has its own gitops.Git (its own token source), and git's ref
	// locks make concurrent fetches into one repository fail.
	mirrorLocks keyedLocks
	disk        *diskGuard
}

// NewServer checks opts.
func NewServer(o ServerOptions) (*Server, error) {
	var missing []string
	for name, ok := range map[string]bool{
		"DataDir": o.DataDir != "", "Queue": o.Queue != nil, "GitHub": o.GitHub != nil,
		"NewReporter": o.NewReporter != nil, "Tokens": o.Tokens != nil,
	} {
		if !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return nil, fmt.Errorf("server: options missing: %v", missing)
	}
	abs, err := filepath.Abs(o.DataDir)
	if err != nil {
		return nil, fmt.Errorf("server: data dir: %w", err)
	}
	o.DataDir = abs
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{o: o, log: log, disk: newDiskGuard(o.DataDir, o.Disk, log)}, nil
}

// Handlers are the queue handlers of this server.
func (s *Server) Handlers() queue.Handlers {
	return queue.Handlers{Run: s.HandleRun, Event: s.HandleEvent}
}

// Accept durably enqueues an event for HandleEvent; it is the webhook
// sink's whole job. A redelivered id is Duplicate and enqueues nothing.
func (s *Server) Accept(ctx context.Context, deliveryID, eventName string, ev Event) (queue.EventResult, error) {
	payload, err := json.Marshal(ev)
	if err != nil {
		return queue.EventResult{}, fmt.Errorf("server: encode event of delivery %s: %w", deliveryID, err)
	}
	d := queue.Delivery{ID: deliveryID, Event: eventName}
	// A pull request's head is remembered at once, so a re-run button on
	// a gated fork PR finds its PR even before the event was decided.
	if ev.Kind == KindPullRequest && ev.PR.Number > 0 && ev.PR.HeadSHA != "" {
		d.Heads = []queue.PRHead{{Repo: ev.Repo.FullName, PR: ev.PR.Number, HeadSHA: ev.PR.HeadSHA}}
	}
	return s.o.Queue.EnqueueEvent(ctx, d, queue.EventArgs{Event: eventName, Payload: payload})
}

// mirrorDir is the repository's bare mirror in the data dir.
func (s *Server) mirrorDir(repo Repo) string {
	return filepath.Join(s.o.DataDir, "mirrors", repo.Owner, repo.Name+".git")
}

func (s *Server) runDir(runID string) runner.RunDir {
	return runner.RunDir(filepath.Join(s.o.DataDir, "runs", runID))
}

// gitFor returns a Git with HOME home whose fetches and pushes
// authenticate with source.
func (s *Server) gitFor(home string, source gitops.TokenSource) (*gitops.Git, error) {
	return gitops.New(gitops.Options{
		GitPath: s.o.GitPath, PATH: s.o.Env.Host["PATH"], HomeDir: home, TokenSource: source,
	})
}

// keyedLocks is a mutex per key.
type keyedLocks struct {
	mu sync.Mutex
	m  map[string]*sync.Mutex
}

func (k *keyedLocks) lock(key string) (unlock func()) {
	k.mu.Lock()
	if k.m == nil {
		k.m = map[string]*sync.Mutex{}
	}
	l := k.m[key]
	if l == nil {
		l = &sync.Mutex{}
		k.m[key] = l
	}
	k.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// errNoPR marks a re-run whose head SHA maps to no known pull request.
var errNoPR = errors.New("no pull request known for the head sha")
