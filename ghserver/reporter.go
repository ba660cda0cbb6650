package ghserver

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
	"github.com/kilroy-bot/kilroy-bot/server"
)

// releaseTimeout bounds sending the last in-progress state of the checks
// of a run handed back at shutdown.
const releaseTimeout = 10 * time.Second

// NewReporter is server.ServerOptions.NewReporter: a checks.Publisher on
// the run's installation, with the adapter's redactor, annotation cap and
// links, and the metrics listener.
func (a *Adapter) NewReporter(ctx context.Context, t server.ReportTarget) (server.Reporter, error) {
	owner, name, ok := strings.Cut(t.Repo, "/")
	if !ok || owner == "" || name == "" {
		return nil, errors.New("reporter: repository " + t.Repo + " is not owner/name")
	}
	client, repo := a.o.App.Installation(ctx, t.InstallationID), ghapp.Repo{Owner: owner, Name: name}
	info := checks.RunInfo{Pipeline: t.Pipeline, RunID: t.RunID, HeadSHA: t.HeadSHA, Notes: t.Notes}
	if t.Image != nil {
		info.Image, info.ImageDigest = t.Image.Ref, t.Image.Pinned.Digest
	}
	pub := checks.NewPublisher(client, repo, t.Graph, info, a.options(t.Repo))
	if t.History != nil {
		// Before Adopt, so that the adopted checks show the nodes the run
		// finished before it was interrupted as they ran.
		pub.Seed(Prior(t.History))
	}
	usage := a.o.Metrics.UsageListener(metrics.RunLabels{Installation: t.InstallationID, Repository: t.Repo, Pipeline: t.Pipeline})
	return &Reporter{Publisher: pub, metrics: attractor.Listeners{a.o.Metrics.Listener(), usage}, log: a.o.Logger,
		api: client, repo: repo, target: t, locks: &a.locks,
		runDir: filepath.Join(a.o.DataDir, "runs", t.RunID), render: a.options(t.Repo).Render,
		shuttingDown: func() bool { return errors.Is(context.Cause(ctx), queue.ErrStopping) }}, nil
}

// Reporter adapts a Publisher to the server's Reporter contract and adds
// the metrics listener to the run's events.
type Reporter struct {
	*checks.Publisher
	metrics attractor.Listener
	log     *slog.Logger
	api     checks.API
	repo    ghapp.Repo
	target  server.ReportTarget
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
func (r *Reporter) handedBack(ctx context.Context) bool {
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

var _ server.Reporter = (*Reporter)(nil)

// Queued creates the run's checks unless its summary check exists
// already: a retried event, or a run that started first and made its own.
// Checks found are left alone, whatever their state: they are the run's.
// Then it hands them over: the run's reporter adopts them, so this one
// stops its background sending.
func (r *Reporter) Queued(ctx context.Context) error {
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
func (r *Reporter) Adopt(ctx context.Context) error {
	defer r.locks.lock(r.target.RunID)()
	return r.Publisher.Adopt(ctx)
}

// ActionRequired, Cancel and Fail end the reporter: each completes every
// check, and Close then stops the background sending.
func (r *Reporter) ActionRequired(ctx context.Context, title, summary string) error {
	return r.saved(errors.Join(r.Publisher.ActionRequired(ctx, title, summary), r.Publisher.Close(ctx)))
}

func (r *Reporter) Cancel(ctx context.Context, reason string) error {
	return r.saved(errors.Join(r.Publisher.Cancel(ctx, reason), r.Publisher.Close(ctx)))
}

func (r *Reporter) Fail(ctx context.Context, reason string) error {
	return r.saved(errors.Join(r.Publisher.Fail(ctx, reason), r.Publisher.Close(ctx)))
}

func (r *Reporter) Close(ctx context.Context) error {
	return r.saved(r.Publisher.Close(ctx))
}

// saved writes report.md from the Publisher's view and passes err on: a
// report that cannot be written is logged, the checks matter more.
func (r *Reporter) saved(err error) error {
	if werr := writeReport(r.runDir, r.Publisher.View(), r.render); werr != nil {
		r.log.Warn("run page: write the report", "run", r.target.RunID, "err", werr)
	}
	return err
}

func (r *Reporter) NodeStarted(ctx context.Context, ev attractor.NodeStarted) error {
	if r.handedBack(ctx) {
		return nil
	}
	return r.saved(errors.Join(r.Publisher.NodeStarted(ctx, ev), r.metrics.NodeStarted(ctx, ev)))
}

func (r *Reporter) AttemptFinished(ctx context.Context, ev attractor.AttemptFinished) error {
	if r.handedBack(ctx) {
		return nil
	}
	// No report write: the checkpoint (or the retry's start) follows within
	// milliseconds and shows the same, and every write renders it whole.
	return errors.Join(r.Publisher.AttemptFinished(ctx, ev), r.metrics.AttemptFinished(ctx, ev))
}

func (r *Reporter) EdgeSelected(ctx context.Context, ev attractor.EdgeSelected) error {
	if r.handedBack(ctx) {
		return nil
	}
	// Shown by the next node's start, which follows at once.
	return errors.Join(r.Publisher.EdgeSelected(ctx, ev), r.metrics.EdgeSelected(ctx, ev))
}

func (r *Reporter) Checkpointed(ctx context.Context, ev attractor.Checkpointed) error {
	if r.handedBack(ctx) {
		return nil
	}
	return r.saved(errors.Join(r.Publisher.Checkpointed(ctx, ev), r.metrics.Checkpointed(ctx, ev)))
}

func (r *Reporter) RunFinished(ctx context.Context, res *attractor.RunResult) error {
	if r.handedBack(ctx) {
		return nil
	}
	return r.saved(errors.Join(r.Publisher.RunFinished(ctx, res), r.metrics.RunFinished(ctx, res)))
}
