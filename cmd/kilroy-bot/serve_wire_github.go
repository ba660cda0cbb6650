package main

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/checks"
	"github.com/kilroy-bot/kilroy-bot/ghapp"
	"github.com/kilroy-bot/kilroy-bot/metrics"
	"github.com/kilroy-bot/kilroy-bot/queue"
	appserver "github.com/kilroy-bot/kilroy-bot/server"
)

// maxCommentBody is GitHub's limit on an issue comment's body.
const maxCommentBody = 65536

// releaseTimeout bounds sending the last in-progress state of the checks
// of a run handed back at shutdown.
const releaseTimeout = 10 * time.Second

// githubAPI is appserver.GitHub over one installation's client. Everything
// it posts passes through the server's redactor.
type githubAPI struct {
	c         *ghapp.Client
	reporters *reporterFactory
}

var _ appserver.GitHub = (*githubAPI)(nil)

func ghRepo(r appserver.Repo) ghapp.Repo { return ghapp.Repo{Owner: r.Owner, Name: r.Name} }

func (a *githubAPI) PullRequest(ctx context.Context, repo appserver.Repo, n int) (appserver.PullRequest, error) {
	pr, err := a.c.PullRequest(ctx, ghRepo(repo), n)
	if err != nil {
		return appserver.PullRequest{}, err
	}
	return appserver.PullRequest{Number: pr.Number, State: pr.State, HeadSHA: pr.HeadSHA, HeadRepoFullName: pr.HeadRepo,
		BaseRef: pr.BaseRef, Draft: pr.Draft, Fork: pr.FromFork(), AuthorLogin: pr.Author}, nil
}

func (a *githubAPI) PullRequestFiles(ctx context.Context, repo appserver.Repo, n int) ([]string, error) {
	return a.c.PullRequestFiles(ctx, ghRepo(repo), n)
}

func (a *githubAPI) CollaboratorPermission(ctx context.Context, repo appserver.Repo, user string) (string, error) {
	return a.c.CollaboratorPermission(ctx, ghRepo(repo), user)
}

func (a *githubAPI) CreateComment(ctx context.Context, repo appserver.Repo, n int, body string) error {
	_, err := a.c.CreateComment(ctx, ghRepo(repo), n, checks.Truncate(a.reporters.w.Redactor.Redact(body), maxCommentBody, ""))
	return err
}

func (a *githubAPI) AddReaction(ctx context.Context, repo appserver.Repo, id int64, content string) error {
	return a.c.AddReaction(ctx, ghRepo(repo), id, content)
}

// ConfigCheck publishes the failed kilroy/config check through a
// Publisher, which redacts, fits GitHub's limits and sends annotations
// past the first 50 in further requests.
func (a *githubAPI) ConfigCheck(ctx context.Context, repo appserver.Repo, c appserver.ConfigCheck) error {
	anns := make([]checks.Annotation, len(c.Annotations))
	for i, an := range c.Annotations {
		anns[i] = checks.Annotation{Path: an.Path, StartLine: an.Line, EndLine: an.Line,
			Level: checks.LevelFailure, Message: an.Message, Title: "invalid " + an.Path}
		if an.Column > 0 {
			anns[i].StartColumn, anns[i].EndColumn = an.Column, an.Column
		}
	}
	name := strings.TrimPrefix(appserver.ConfigCheckName, "kilroy/")
	opts := a.reporters.options(repo.FullName)
	opts.DetailsURL = nil // no run page: nothing ran
	pub := checks.NewPublisher(a.c, ghRepo(repo), nil,
		checks.RunInfo{Pipeline: name, RunID: name + "-" + c.HeadSHA, HeadSHA: c.HeadSHA}, opts)
	return errors.Join(pub.Invalid(ctx, c.Title, c.Summary, anns), pub.Close(ctx))
}

// reporterFactory makes the check reporter of each run: a checks.Publisher
// on the run's installation, with the server's redactor, annotation cap
// and links, and the metrics listener.
type reporterFactory struct {
	w   wired
	web string // GitHub's web root, for commit links
	// locks make a run's Queued and Adopt take turns in this process: the
	// event handler creates the checks of a run it enqueued while a worker
	// may already be starting the run, and either must see what the other
	// created (a create GitHub answers late, after retries, is invisible
	// until then).
	locks runLocks
}

func (f *reporterFactory) options(repo string) checks.PublishOptions {
	return checks.PublishOptions{
		DetailsURL: f.w.RunURL, // the run page link with its token
		Render: checks.RenderOptions{
			CommitURL: func(sha string) string {
				if f.web == "" {
					return ""
				}
				return f.web + "/" + repo + "/commit/" + sha
			},
			OutputTail:     liveOutputTail,
			Redactor:       f.w.Redactor,
			MaxAnnotations: f.w.Config.Policy.MaxAnnotations,
			Banner:         insecureBanner(f.w.Config),
		},
		Throttle: f.w.Config.ProgressEvery,
		Logger:   f.w.Logger,
	}
}

// New is appserver.ServerOptions.NewReporter.
func (f *reporterFactory) New(ctx context.Context, t appserver.ReportTarget) (appserver.Reporter, error) {
	owner, name, ok := strings.Cut(t.Repo, "/")
	if !ok || owner == "" || name == "" {
		return nil, errors.New("reporter: repository " + t.Repo + " is not owner/name")
	}
	client, repo := f.w.App.Installation(ctx, t.InstallationID), ghapp.Repo{Owner: owner, Name: name}
	info := checks.RunInfo{Pipeline: t.Pipeline, RunID: t.RunID, HeadSHA: t.HeadSHA, Notes: t.Notes}
	if t.Image != nil {
		info.Image, info.ImageDigest = t.Image.Ref, t.Image.Pinned.Digest
	}
	pub := checks.NewPublisher(client, repo, t.Graph, info, f.options(t.Repo))
	if t.History != nil {
		// Before Adopt, so that the adopted checks show the nodes the run
		// finished before it was interrupted as they ran.
		pub.Seed(priorOf(t.History))
	}
	usage := f.w.Metrics.UsageListener(metrics.RunLabels{Installation: t.InstallationID, Repository: t.Repo, Pipeline: t.Pipeline})
	return &reporter{Publisher: pub, metrics: attractor.Listeners{f.w.Metrics.Listener(), usage}, log: f.w.Logger,
		api: client, repo: repo, target: t, locks: &f.locks,
		runDir: filepath.Join(f.w.Config.DataDir, "runs", t.RunID), render: f.options(t.Repo).Render,
		shuttingDown: func() bool { return errors.Is(context.Cause(ctx), queue.ErrStopping) }}, nil
}

// reporter adapts a Publisher to the server's Reporter contract and adds
// the metrics listener to the run's events.
type reporter struct {
	*checks.Publisher
	metrics attractor.Listener
	log     *slog.Logger
	api     checks.API
	repo    ghapp.Repo
	target  appserver.ReportTarget
	locks   *runLocks
	// runDir gets the run's report.md, the report the run page shows,
	// when a node starts, when it is checkpointed and when the checks
	// complete.
	runDir string
	render checks.RenderOptions
	// shuttingDown reports whether the run this reporter was made for is
	// being handed back by a shutdown. The engine then reports the run's
	// nodes cancelled and the run finished, but the run is not over: the
	// next start resumes it and adopts its checks, which must still be
	// open. It asks the run's context, which the engine does not pass on
	// to every event (RunFinished gets one without its cancellation).
	shuttingDown func() bool

	mu       sync.Mutex
	released bool
}

// handedBack reports whether the run is being handed back, and the first
// time, stops the Publisher's background sending with the checks as they
// were: open, for the resumed run.
func (r *reporter) handedBack(ctx context.Context) bool {
	if !r.shuttingDown() {
		return false
	}
	r.mu.Lock()
	first := !r.released
	r.released = true
	r.mu.Unlock()
	if first {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		defer cancel()
		if err := r.Publisher.Release(rctx); err != nil {
			r.log.Warn("checks: hand back the checks of an interrupted run", "err", err)
		}
	}
	return true
}

var _ appserver.Reporter = (*reporter)(nil)

// Queued creates the run's checks unless its summary check exists
// already: a retried event, or a run that started first and made its own.
// Checks found are left alone, whatever their state: they are the run's.
// Then it hands them over: the run's reporter adopts them, so this one
// stops its background sending.
func (r *reporter) Queued(ctx context.Context) error {
	defer r.locks.lock(r.target.RunID)()
	found, err := r.api.ListCheckRunsForRef(ctx, r.repo, r.target.HeadSHA, "kilroy/"+r.target.Pipeline)
	if err != nil {
		return err
	}
	for _, c := range found {
		if c.ExternalID == r.target.RunID {
			return nil
		}
	}
	return errors.Join(r.Publisher.Queued(ctx), r.Publisher.Release(ctx))
}

// Adopt takes over the run's checks once no Queued of the run is under
// way in this process.
func (r *reporter) Adopt(ctx context.Context) error {
	defer r.locks.lock(r.target.RunID)()
	return r.Publisher.Adopt(ctx)
}

// ActionRequired, Cancel and Fail end the reporter: each completes every
// check, and Close then stops the background sending.
func (r *reporter) ActionRequired(ctx context.Context, title, summary string) error {
	return r.saved(errors.Join(r.Publisher.ActionRequired(ctx, title, summary), r.Publisher.Close(ctx)))
}

func (r *reporter) Cancel(ctx context.Context, reason string) error {
	return r.saved(errors.Join(r.Publisher.Cancel(ctx, reason), r.Publisher.Close(ctx)))
}

func (r *reporter) Fail(ctx context.Context, reason string) error {
	return r.saved(errors.Join(r.Publisher.Fail(ctx, reason), r.Publisher.Close(ctx)))
}

func (r *reporter) Close(ctx context.Context) error {
	return r.saved(r.Publisher.Close(ctx))
}

// saved writes report.md from the Publisher's view and passes err on: a
// report that cannot be written is logged, the checks matter more.
func (r *reporter) saved(err error) error {
	if werr := writeReport(r.runDir, r.Publisher.View(), r.render); werr != nil {
		r.log.Warn("run page: write the report", "run", r.target.RunID, "err", werr)
	}
	return err
}

func (r *reporter) NodeStarted(ctx context.Context, ev attractor.NodeStarted) error {
	if r.handedBack(ctx) {
		return nil
	}
	return r.saved(errors.Join(r.Publisher.NodeStarted(ctx, ev), r.metrics.NodeStarted(ctx, ev)))
}

func (r *reporter) AttemptFinished(ctx context.Context, ev attractor.AttemptFinished) error {
	if r.handedBack(ctx) {
		return nil
	}
	// No report write: the checkpoint (or the retry's start) follows within
	// milliseconds and shows the same, and every write renders it whole.
	return errors.Join(r.Publisher.AttemptFinished(ctx, ev), r.metrics.AttemptFinished(ctx, ev))
}

func (r *reporter) EdgeSelected(ctx context.Context, ev attractor.EdgeSelected) error {
	if r.handedBack(ctx) {
		return nil
	}
	// Shown by the next node's start, which follows at once.
	return errors.Join(r.Publisher.EdgeSelected(ctx, ev), r.metrics.EdgeSelected(ctx, ev))
}

func (r *reporter) Checkpointed(ctx context.Context, ev attractor.Checkpointed) error {
	if r.handedBack(ctx) {
		return nil
	}
	return r.saved(errors.Join(r.Publisher.Checkpointed(ctx, ev), r.metrics.Checkpointed(ctx, ev)))
}

func (r *reporter) RunFinished(ctx context.Context, res *attractor.RunResult) error {
	if r.handedBack(ctx) {
		return nil
	}
	return r.saved(errors.Join(r.Publisher.RunFinished(ctx, res), r.metrics.RunFinished(ctx, res)))
}

// runLocks is a mutex per run id, dropped when no one holds or waits for
// it.
type runLocks struct {
	mu sync.Mutex
	m  map[string]*runLock
}

type runLock struct {
	sync.Mutex
	refs int
}

// lock locks id's mutex and returns its unlock.
func (l *runLocks) lock(id string) (unlock func()) {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*runLock{}
	}
	rl := l.m[id]
	if rl == nil {
		rl = &runLock{}
		l.m[id] = rl
	}
	rl.refs++
	l.mu.Unlock()
	rl.Lock()
	return func() {
		rl.Unlock()
		l.mu.Lock()
		if rl.refs--; rl.refs == 0 {
			delete(l.m, id)
		}
		l.mu.Unlock()
	}
}
