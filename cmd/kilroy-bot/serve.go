package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/kilroy-bot/kilroy-bot/checks"
	"github.com/kilroy-bot/kilroy-bot/ghapp"
	"github.com/kilroy-bot/kilroy-bot/ghserver"
	"github.com/kilroy-bot/kilroy-bot/metrics"
	"github.com/kilroy-bot/kilroy-bot/queue"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
	"github.com/kilroy-bot/kilroy-bot/runpage"
	"github.com/kilroy-bot/kilroy-bot/webhook"
	"github.com/kilroy-bot/kilroy-bot/webhook/redeliver"
)

const serveUsage = `usage: kilroy-bot serve [flags]

Runs the GitHub App server: POST /webhooks/github, GET /healthz, /readyz,
/metrics and /runs/{id}. Every setting is a flag or an environment
variable; a flag wins over its variable.

  --listen ADDR                KILROY_LISTEN                default :8080
  --data-dir DIR               KILROY_DATA_DIR              default ./kilroy-data
  --database-url URL           KILROY_DATABASE_URL          default: SQLite in the data dir
  --github-url URL             KILROY_GITHUB_URL            default https://api.github.com/
  --app-id ID                  KILROY_APP_ID                required, or the app-id file setup stores in the data dir
  --private-key-file FILE      KILROY_PRIVATE_KEY_FILE      required (PEM)
  --webhook-secret-file FILE   KILROY_WEBHOOK_SECRET_FILE   required, or the value in KILROY_WEBHOOK_SECRET
  --config FILE                KILROY_CONFIG                optional server policy YAML
  --public-url URL             KILROY_PUBLIC_URL            base of details_url links
  --workers N                  KILROY_WORKERS               default 2
  --insecure-no-sandbox        KILROY_INSECURE_NO_SANDBOX=1 run nodes without the sandbox (every summary says so)
  --allow-root                 KILROY_ALLOW_ROOT=1          run as root (every summary says so)

Exit status: 0 after a graceful shutdown (SIGINT, SIGTERM), 1 when the
server fails, 2 when a setting is missing or wrong.
`

// refuseRoot is why serve does not start as root unless told to.
const refuseRoot = `kilroy-bot serve: runs as root, and will not unless told to: a node that gets out of its
kilroy-bot serve: sandbox would have root on this machine, and the files nodes write in worktrees and caches
kilroy-bot serve: are root's here. Run serve as an unprivileged user (the image does: user 10001; see
kilroy-bot serve: docs/serve.md §11), or pass --allow-root (KILROY_ALLOW_ROOT=1) to run as root anyway:
kilroy-bot serve: every check summary will then say so.
`

// runServe implements `kilroy-bot serve`: read the settings, wire the
// server, serve until ctx ends, shut down gracefully.
func runServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cfg, err := loadServeConfig(args, getenv)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, serveUsage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "kilroy-bot serve: %s\n\nrun kilroy-bot serve -h for the settings\n", strings.ReplaceAll(err.Error(), "\n", "\nkilroy-bot serve: "))
		return 2
	}
	if cfg.Root && !cfg.AllowRoot {
		fmt.Fprint(stderr, refuseRoot)
		return 2
	}
	logger := newServeLogger(stderr, cfg)
	ctx = withLogger(ctx, logger)
	deps, err := wireServe(ctx, cfg, productionWiring())
	if err != nil {
		logger.ErrorContext(ctx, "serve: cannot start", "err", err)
		return 1
	}
	srv, err := buildServer(ctx, cfg, deps)
	if err != nil {
		logger.ErrorContext(ctx, "serve: cannot start", "err", err)
		if serr := deps.Shutdown(context.WithoutCancel(ctx)); serr != nil {
			logger.ErrorContext(ctx, "serve: shutdown", "err", serr)
		}
		return 1
	}
	logStart(ctx, logger, currentBuild(), cfg, srv.Addr().String())
	if err := srv.run(ctx); err != nil {
		logger.ErrorContext(ctx, "serve: stopped with an error", "err", err)
		return 1
	}
	logger.InfoContext(ctx, "serve: stopped")
	return 0
}

// logStart writes the start line: which build, with which settings, where.
func logStart(ctx context.Context, logger *slog.Logger, b buildInfo, cfg serveConfig, addr string) {
	logger.InfoContext(ctx, "serve: starting", "version", b.Version, "revision", short(b.Revision),
		"config", cfg, "addr", addr)
}

// appWiring is where the run side plugs into serve. serve builds the
// queue, the GitHub App, the metrics and the HTTP server; the run side,
// built once over them, turns deliveries into queued jobs and queued jobs
// into runs. serve refuses to start without it, saying what is missing.
type appWiring struct {
	// RunSide builds the run side (server.NewServer over w.Queue and
	// w.App, the checks publisher, the agents of w.Config.Policy.Agents).
	RunSide func(ctx context.Context, w wired) (runSide, error)
}

// runSide is what the run side hands serve.
type runSide struct {
	// Sink is the webhook's durable Sink: it enqueues a delivery's Event
	// (webhook.Sink's contract; server.Server.Accept does the enqueueing).
	Sink webhook.Sink
	// Start starts working queued jobs (queue.StartHandlers). Each run adds
	// w.Metrics.Listener() to its listeners and uses w.RunURL as the
	// details_url of its checks. The returned stop is the shutdown hook: it
	// is called after the HTTP server has drained and must leave every
	// check run completed (queue.Stop, then the checks of what it
	// cancelled). serve closes the queue after it.
	Start func(ctx context.Context) (stop func(context.Context) error, err error)
	// CommitURL links a checkpoint commit on a run's page, such as the
	// repository's web URL + "/commit/" + sha (queue.RunByID knows the
	// run's repository); nil shows bare SHAs.
	CommitURL func(runID, sha string) string
	// Source names the repository, pull request and head commit of a run
	// for the links at the top of its page; nil shows none.
	Source func(runID string) runpage.Source
	// Background runs while the server serves (the retention sweep); nil
	// for none.
	Background func(ctx context.Context)
}

// wired is what serve has built for the run side.
type wired struct {
	Config   serveConfig
	Queue    *queue.Queue
	App      *ghapp.App
	Metrics  *metrics.Metrics
	Redactor *checks.Redactor
	Logger   *slog.Logger
	// RunURL is the page of a run with its access token, for details_url;
	// "" without a public URL.
	RunURL func(runID string) string
}

// serveDeps are what buildServer mounts and calls.
type serveDeps struct {
	Logger   *slog.Logger
	Webhook  http.Handler // POST /webhooks/github
	Pages    *runpage.Pages
	Gatherer prometheus.Gatherer
	// Ready are checked by /readyz besides the data dir.
	Ready []readyCheck
	// Shutdown runs after the HTTP server has drained: the run workers
	// finish or hand back their runs and complete their checks.
	Shutdown func(ctx context.Context) error
	Redactor *checks.Redactor
	// Background runs while the server serves, from when it listens until
	// shutdown begins (missed-delivery recovery); nil for none.
	Background func(ctx context.Context)
	// MaxConns bounds the connections held at once (0: maxConns). Not a
	// setting: tests lower it.
	MaxConns int
}

func (d serveDeps) maxConns() int {
	if d.MaxConns > 0 {
		return d.MaxConns
	}
	return maxConns
}

// readyCheck is one condition of /readyz.
type readyCheck struct {
	Name  string
	Check func(ctx context.Context) error
}

// wireServe builds everything serve runs: the data dir, the queue, the
// metrics registry, the GitHub App, the run side, the webhook over its
// sink, the run pages, and it starts the workers. On error it releases
// what it opened.
func wireServe(ctx context.Context, cfg serveConfig, wiring appWiring) (deps serveDeps, err error) {
	logger := loggerFrom(ctx)
	if wiring.RunSide == nil {
		return deps, errors.New("serve is not wired: no run side turns deliveries into queued runs and runs them")
	}
	if err := closeDataDir(cfg.DataDir, logger); err != nil {
		return deps, err
	}
	runsDir := filepath.Join(cfg.DataDir, "runs")
	if err := os.MkdirAll(runsDir, 0o755); err != nil {
		return deps, fmt.Errorf("create data dir: %w", err)
	}
	// The webhook secrets, current first: the webhook accepts any, run
	// page links are signed with the current one and opened with any.
	secrets := [][]byte{cfg.WebhookSecret}
	keys, err := runpage.NewKeys(secrets...)
	if err != nil {
		return deps, err
	}
	w := wired{Config: cfg, Logger: logger, RunURL: runURL(cfg.PublicURL, keys)}
	w.Redactor = ghserver.NewRedactor(cfg.DataDir, append([]string{string(cfg.WebhookSecret), string(cfg.PrivateKey)},
		sandbox.HostSecrets(sandbox.HostEnv())...)...)

	w.Queue, err = openQueueWaiting(ctx, queue.Options{
		DataDir: cfg.DataDir, DatabaseURL: string(cfg.DatabaseURL), Workers: cfg.Workers, Logger: logger,
		StaleAfter: cfg.StaleAfter,
		Caps:       cfg.Policy.Limits.runCaps(cfg.Workers), Capped: cappedNotice(&w.App, w.Redactor.Redact),
	}, cmp.Or(cfg.DatabaseWait, defaultDatabaseWait), logger)
	if err != nil {
		return deps, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, w.Queue.Close())
		}
	}()

	reg, err := newRegistry(&w)
	if err != nil {
		return deps, err
	}

	w.App, err = ghapp.NewApp(ghapp.Options{
		AppID: cfg.AppID, PrivateKeyPEM: cfg.PrivateKey, BaseURL: cfg.GitHubURL, Logger: logger,
		HTTPClient: &http.Client{Transport: w.Metrics.RoundTripper(http.DefaultTransport)},
	})
	if err != nil {
		return deps, err
	}

	rs, err := wiring.RunSide(ctx, w)
	switch {
	case err != nil:
		return deps, fmt.Errorf("run side: %w", err)
	case rs.Sink == nil:
		return deps, errors.New("serve is not wired: the run side has no webhook sink")
	case rs.Start == nil:
		return deps, errors.New("serve is not wired: the run side has no workers")
	}
	hook, err := webhook.New(webhook.Config{
		Secrets: secrets, AppID: cfg.AppID, AppSlug: cfg.Policy.AppSlug, Logger: logger,
	}, rs.Sink)
	if err != nil {
		return deps, err
	}
	if err := metrics.RegisterBodyBytes(reg, hook.BodyBytesInFlight); err != nil {
		return deps, err
	}
	pages, err := runpage.New(runpage.Options{RunsDir: runsDir, Keys: keys, Redactor: w.Redactor, CommitURL: rs.CommitURL, Source: rs.Source,
		Active: runActive(w.Queue)})
	if err != nil {
		return deps, err
	}

	stop, err := rs.Start(ctx)
	if err != nil {
		return deps, fmt.Errorf("start run workers: %w", err)
	}
	return serveDeps{
		Logger:   logger,
		Webhook:  w.Metrics.Deliveries(hook),
		Pages:    pages,
		Gatherer: reg,
		Ready:    []readyCheck{{Name: "queue", Check: queueReady(w.Queue)}},
		Shutdown: func(ctx context.Context) error {
			return errors.Join(stop(ctx), w.Queue.Close())
		},
		Redactor:   w.Redactor,
		Background: together(recoverer(cfg, w), rs.Background, permissionHints(w.App, logger)),
	}, nil
}

// recoverer is the missed-delivery recovery loop over GitHub's delivery log
// and the queue's record of deliveries; nil when the policy turns it off.
func recoverer(cfg serveConfig, w wired) func(context.Context) {
	opts, off, err := cfg.Policy.Redelivery.options(nil)
	if off || err != nil { // decodePolicy has refused an invalid value
		return nil
	}
	opts.Logger = w.Logger
	return redeliver.New(w.App, w.Queue, opts).Run
}

// together runs the non-nil background loops side by side until ctx ends.
func together(loops ...func(context.Context)) func(context.Context) {
	var run []func(context.Context)
	for _, l := range loops {
		if l != nil {
			run = append(run, l)
		}
	}
	if len(run) == 0 {
		return nil
	}
	return func(ctx context.Context) {
		var wg sync.WaitGroup
		for _, l := range run {
			wg.Go(func() { l(ctx) })
		}
		wg.Wait()
	}
}

// newRegistry makes this server's Prometheus registry, never the global
// one, and w.Metrics on it.
func newRegistry(w *wired) (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	opts := metrics.Options{Build: currentBuild().metrics()}
	if w.Queue != nil {
		opts.QueueDepth, opts.IntakeDepth = w.Queue.Depth, w.Queue.IntakeDepth
	}
	m, err := metrics.New(reg, opts)
	if err != nil {
		return nil, err
	}
	w.Metrics = m
	return reg, nil
}

// queueReady asks the database to answer; it fails with
// queue.ErrUnavailable when it does not.
func queueReady(q *queue.Queue) func(context.Context) error { return q.Ping }

// runURL returns the function that links a run's page, with the token
// that opens it: <public-url>/runs/<id>?t=<token>.
func runURL(publicURL string, keys *runpage.Keys) func(string) string {
	return func(id string) string {
		if publicURL == "" {
			return ""
		}
		return publicURL + keys.Path(id)
	}
}

// loggerKey carries the logger in a context.
type loggerKey struct{}

func withLogger(ctx context.Context, l *slog.Logger) context.Context {
	return context.WithValue(ctx, loggerKey{}, l)
}

// loggerFrom returns the context's logger, or one that discards.
func loggerFrom(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(loggerKey{}).(*slog.Logger); ok {
		return l
	}
	return slog.New(slog.DiscardHandler)
}
