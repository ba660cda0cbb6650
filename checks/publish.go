package checks

import (
	"cmp"
	"context"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/ghapp"
)

// API is the part of GitHub a Publisher calls; *ghapp.Client satisfies it.
type API interface {
	CreateCheckRun(ctx context.Context, repo ghapp.Repo, cr ghapp.CheckRunCreate) (int64, error)
	UpdateCheckRun(ctx context.Context, repo ghapp.Repo, id int64, u ghapp.CheckRunUpdate) error
	ListCheckRunsForRef(ctx context.Context, repo ghapp.Repo, sha, name string) ([]ghapp.CheckRun, error)
}

var _ API = (*ghapp.Client)(nil)

// Requested actions on the checks, by identifier (GitHub allows 20
// characters); the check_run requested_action webhook carries them back.
const (
	ActionRerun       = "rerun"
	ActionRerunFailed = "rerun_failed"
	ActionCancel      = "cancel"
)

var (
	rerunAction  = ghapp.CheckRunAction{Label: "Re-run", Description: "Run this pipeline again", Identifier: ActionRerun}
	cancelAction = ghapp.CheckRunAction{Label: "Cancel", Description: "Stop this run", Identifier: ActionCancel}
	// rerunFailedAction is on a summary check whose run failed at a node
	// after a checkpoint: a new run resumes from the checkpoint before it.
	rerunFailedAction = ghapp.CheckRunAction{Label: "Re-run from failure", Description: "Run again from the failed node",
		Identifier: ActionRerunFailed}
)

// Defaults of PublishOptions.
const (
	DefaultThrottle      = 10 * time.Second
	DefaultCloseAttempts = 5
)

// PublishOptions configure a Publisher. Zero values take the defaults.
type PublishOptions struct {
	// PublicURL is where the bot serves its pages; details_url is
	// PublicURL/runs/<run-id>. Empty leaves details_url out.
	PublicURL string
	// DetailsURL, when set, makes the details_url of a run instead of
	// PublicURL, such as a run page link carrying its access token; ""
	// leaves details_url out.
	DetailsURL func(runID string) string
	// Render is how the checks are rendered. An empty RunURL becomes the
	// details URL; a nil Redactor still redacts token shapes.
	Render RenderOptions
	// Throttle is the least time between two in-progress updates of one
	// check (default 10s). Creations and changes of status (going
	// in_progress, completing) are never held back.
	Throttle time.Duration
	// CloseAttempts bounds the rounds Close, Cancel, Fail and
	// ActionRequired spend getting every check up to date (default 5).
	CloseAttempts int
	// Now is the clock throttling and timestamps use (default time.Now).
	Now func() time.Time
	// Sleep waits between those rounds and out rate limits (default: a
	// timer, cut short by ctx).
	Sleep func(ctx context.Context, d time.Duration) error
	// After arms the background flush of throttled updates (default
	// time.After). Tests replace it, with Now, to run the clock by hand.
	After  func(d time.Duration) <-chan time.Time
	Logger *slog.Logger
}

// withDefaults fills in the zero values.
func (o PublishOptions) withDefaults(detailsURL string) PublishOptions {
	o.Throttle = cmp.Or(o.Throttle, DefaultThrottle)
	o.CloseAttempts = cmp.Or(o.CloseAttempts, DefaultCloseAttempts)
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = sleepContext
	}
	if o.After == nil {
		o.After = time.After
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Render.Redactor == nil {
		o.Render.Redactor = NewRedactor()
	}
	o.Render.RunURL = cmp.Or(o.Render.RunURL, detailsURL)
	return o
}

// Log keys, named once.
const (
	logRepo  = "repo"
	logRun   = "run"
	logCheck = "check"
	logErr   = "err"
)

// Publisher keeps the check runs of one pipeline run on GitHub in step
// with the run. It is an attractor.Listener: events update a Recorder and
// the body each check should show, and return at once; a background
// goroutine sends what changed, holding back in-progress updates to one
// per check per Throttle; a check's move to in_progress goes at once. A
// failed call loses nothing: the latest body of every check is kept until
// GitHub has accepted it, and is sent again on the next event, by the
// background flush, or by Close.
//
// Check runs: kilroy/<pipeline> with external_id "<run-id>", and
// kilroy/<pipeline>/<node> for every verify node with external_id
// "<run-id>/<node-id>". The run ID alone names the summary check because
// node IDs are never empty, so the text before the first "/" is always
// the run. A verify node visited again after its check completed gets a
// new check run of the same name and external_id (GitHub shows the newest
// of a name; annotations cannot be taken back from the old one).
//
// Calls: NewPublisher, then Queued (or Adopt after a restart, or
// ActionRequired or Invalid instead of running), the listener events,
// Cancel or Fail if the run is stopped, and Close when it is over. Close, Cancel and
// Fail complete every check the Publisher created. A Publisher is safe
// for concurrent use: the engine reports while the host cancels.
type Publisher struct {
	api     API
	repo    ghapp.Repo
	headSHA string
	runID   string
	details string
	opts    PublishOptions
	log     *slog.Logger
	rec     *Recorder

	// pubMu is held while talking to GitHub, so that one round of
	// updates runs at a time and checks are never sent out of order.
	pubMu sync.Mutex

	mu      sync.Mutex
	checks  []*check          // every check run, in the order rounds visit them
	summary *check            // the current kilroy/<pipeline> check
	verify  map[string]*check // node → its current check
	gate    *gate             // set by ActionRequired and Invalid
	adopt   bool              // look for existing check runs before creating
	blocked time.Time         // rate limited until then
	// stopped: the host ended the run (Cancel, Fail); the engine's last
	// events about it must not make its checks look under way again.
	stopped bool
	closed  bool
	worker  *worker // nil until started
	// live are the nodes running now, for progress (publish_progress.go).
	live liveNodes
}

var _ attractor.Listener = (*Publisher)(nil)

// NewPublisher returns a Publisher for a run of p on info.HeadSHA in repo.
// It makes no request.
func NewPublisher(api API, repo ghapp.Repo, p *attractor.Pipeline, info RunInfo, opts PublishOptions) *Publisher {
	details := ""
	switch {
	case opts.DetailsURL != nil:
		details = opts.DetailsURL(info.RunID)
	case opts.PublicURL != "":
		details = strings.TrimRight(opts.PublicURL, "/") + "/runs/" + url.PathEscape(info.RunID)
	}
	opts = opts.withDefaults(details)
	pub := &Publisher{
		api: api, repo: repo, headSHA: info.HeadSHA, runID: info.RunID, details: details, opts: opts,
		log:    opts.Logger.With(logRepo, repo.String(), logRun, info.RunID),
		rec:    NewRecorder(p, info),
		verify: map[string]*check{},
	}
	v := pub.rec.View()
	r := opts.Render.Redactor
	pub.summary = &check{name: r.Redact("kilroy/" + v.Pipeline), externalID: r.Redact(v.RunID)}
	pub.checks = append(pub.checks, pub.summary)
	for _, n := range v.Nodes {
		if !n.Verify {
			continue
		}
		c := &check{node: n.ID, name: r.Redact("kilroy/" + v.Pipeline + "/" + n.ID), externalID: r.Redact(v.RunID + "/" + n.ID)}
		pub.verify[n.ID] = c
		pub.checks = append(pub.checks, c)
	}
	pub.renderLocked(v, nil, true)
	return pub
}

// View returns a snapshot of the run as the checks show it.
func (p *Publisher) View() *RunView { return p.rec.View() }

// DetailsURL is the details_url of the checks, "" for none.
func (p *Publisher) DetailsURL() string { return p.details }

// Queued creates the checks, queued, and starts sending updates. An error
// says some could not be created yet; they are retried with the next
// update, so the run should go ahead.
func (p *Publisher) Queued(ctx context.Context) error {
	_, err := p.sync(ctx, false)
	p.kick(ctx)
	return err
}

// Adopt is Queued after a restart: the checks this run created before are
// found on the head commit by name and external_id and updated from now
// on; only those missing are created. A check found completed is left as
// it is; a verify node that runs again gets a new one.
func (p *Publisher) Adopt(ctx context.Context) error {
	p.mu.Lock()
	p.adopt = true
	p.mu.Unlock()
	return p.Queued(ctx)
}

// ActionRequired completes the summary check as action_required with the
// given title and summary (markdown: why the run waits and how a writer
// approves it) instead of running. No verify check is created; any that
// already exist complete as skipped.
func (p *Publisher) ActionRequired(ctx context.Context, title, summary string) error {
	return p.conclude(ctx, "action_required", title, summary, nil, "skipped: the run waits for approval")
}

// Invalid completes the summary check as failure instead of running, for
// a pipeline or configuration that does not load: title and summary say
// so, anns (DiagnosticAnnotations, say) mark the offending lines. No
// verify check is created. The pipeline given to NewPublisher may be nil.
func (p *Publisher) Invalid(ctx context.Context, title, summary string, anns []Annotation) error {
	return p.conclude(ctx, ConclusionFailure, title, summary, anns, "skipped: the pipeline is invalid")
}

// conclude completes the summary check with a body of the host's making;
// verify checks already created complete as skipped with skipTitle.
func (p *Publisher) conclude(ctx context.Context, conclusion, title, summary string, anns []Annotation, skipTitle string) error {
	p.pubMu.Lock()
	r := p.opts.Render.Redactor
	fitted := make([]Annotation, 0, len(anns))
	for _, a := range anns[:min(len(anns), p.opts.Render.maxAnnotations())] {
		fitted = append(fitted, fitAnnotation(a, r))
	}
	SortAnnotations(fitted)
	p.mu.Lock()
	p.gate = &gate{
		body: body{
			status: StatusCompleted, conclusion: conclusion,
			title:   clip(firstLine(r.Redact(title)), maxTitle),
			summary: Truncate(r.Redact(summary), MaxOutput, p.details),
		},
		anns: fitted, skipTitle: skipTitle,
	}
	for _, c := range p.checks {
		if c != p.summary && c.id == 0 {
			c.dropped = true // never created, and now never will be
		}
	}
	p.renderLocked(p.rec.View(), nil, true)
	p.mu.Unlock()
	p.pubMu.Unlock()
	return p.finish(ctx)
}

// Cancel ends the run as cancelled with reason ("superseded by 1a2b3c4",
// "cancelled by @octocat", "kilroy-bot is shutting down") and completes
// every check: those of nodes that did not finish as cancelled. A
// RunFinished that follows keeps the reason. ctx bounds the attempts.
func (p *Publisher) Cancel(ctx context.Context, reason string) error {
	p.stop()
	p.rec.Cancel(reason)
	p.rerender()
	return p.finish(ctx)
}

// Fail ends the run as failed with reason after an internal error that
// kept the engine from finishing it, and completes every check. As after
// Cancel, later events of the engine but RunFinished are ignored.
func (p *Publisher) Fail(ctx context.Context, reason string) error {
	p.stop()
	p.rec.Fail(reason)
	p.rerender()
	return p.finish(ctx)
}

// PushFailed records that the run branch could not be pushed, before the
// host closes the checks: the summary check then fails, and its title and
// first line say that the push failed and why. Node checks keep their
// results.
func (p *Publisher) PushFailed(_ context.Context, reason string) error {
	p.rec.PushFailed(reason)
	p.rerender()
	return nil
}

// Close stops the background sending and brings every check up to date,
// retrying a bounded number of times (waiting out rate limits) within
// ctx. A run that never reported its end is failed first, so no check
// is left queued or in progress. Close may be called more than once.
func (p *Publisher) Close(ctx context.Context) error {
	p.mu.Lock()
	p.closed = true
	p.liveStopLocked()
	unfinished := p.gate == nil && !p.rec.View().Finished()
	w := p.worker
	p.mu.Unlock()
	if unfinished {
		p.stop()
		p.rec.Fail("the run stopped without reporting how it ended")
		p.rerender()
	}
	if w != nil {
		w.stop(ctx)
	}
	return p.finish(ctx)
}

// Release stops the background sending without completing any check,
// for a host that hands the run to another Publisher: the checks Queued
// created when the run was enqueued are adopted by the one that works
// the run. What is pending is sent once more first; whatever still fails
// is left to the adopter, which creates the checks it does not find.
func (p *Publisher) Release(ctx context.Context) error {
	p.mu.Lock()
	p.closed = true
	p.liveStopLocked()
	w := p.worker
	p.mu.Unlock()
	if w != nil {
		w.stop(ctx)
	}
	_, err := p.sync(ctx, true)
	return err
}

// stop makes the Publisher deaf to the engine's events but RunFinished.
func (p *Publisher) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	p.liveStopLocked()
}

// rerender recomputes every check's body from the view.
func (p *Publisher) rerender() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.renderLocked(p.rec.View(), nil, true)
}
