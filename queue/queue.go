package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"
)

// ErrUnavailable wraps every failure to reach or use the database. The
// webhook answers 503 for it, and serve asks GitHub for the delivery again
// later (webhook/redeliver).
var ErrUnavailable = errors.New("queue unavailable")

const (
	queueName = "kilroy"
	// retention is how long deliveries (for dedupe), finished runs,
	// SHA→PR mappings and leftover waiting nodes and answers are kept:
	// deliveries are redelivered for far less than that (72h), and no run
	// lasts as long.
	retention           = 30 * 24 * time.Hour
	pruneEvery          = time.Hour
	defaultWorkers      = 2
	defaultEventWorkers = 4
	defaultStaleAfter   = time.Minute
	// hardStopWait bounds how long Stop waits for handlers after cancelling
	// their contexts.
	hardStopWait = 30 * time.Second
)

// Options configure Open.
type Options struct {
	// DataDir holds the SQLite database (kilroy.db) when DatabaseURL is empty.
	DataDir string
	// DatabaseURL, a postgres:// URL, selects Postgres so that several
	// replicas share the queue.
	DatabaseURL string
	// Workers is the number of runs this process works at once (default 2).
	Workers int
	// EventWorkers is the number of events this process decides at once
	// (default 4), beside the run workers.
	EventWorkers int
	Logger       *slog.Logger
	// StaleAfter is how long a run's process may miss its heartbeat before
	// another process takes the run back as interrupted (default 1m). The
	// heartbeat runs four times per StaleAfter.
	StaleAfter time.Duration
	// Caps bound the runs going at once per installation and repository,
	// across every process sharing the database (sched.go).
	Caps Caps
	// Capped, if set, hears of each queued run held back by a cap, once
	// per cause, in a goroutine of its own; an error (the run's check does
	// not exist yet, say) makes it hear of the run again a second later.
	Capped func(ctx context.Context, w CappedRun) error
}

func (o Options) withDefaults() Options {
	if o.Workers <= 0 {
		o.Workers = defaultWorkers
	}
	if o.EventWorkers <= 0 {
		o.EventWorkers = defaultEventWorkers
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.StaleAfter <= 0 {
		o.StaleAfter = defaultStaleAfter
	}
	return o
}

// Queue is the durable run queue. It is safe for concurrent use.
type Queue struct {
	eng        engine
	q          queries
	d          dialect
	log        *slog.Logger
	owner      string // this process's id in runs.owner
	staleAfter time.Duration

	// handlers are set by Start before River starts working jobs.
	handlers Handlers
	// enqueueGate makes concurrent EnqueueDelivery calls take turns in
	// arrival order. The database serialises them anyway (SQLite has one
	// connection), but database/sql hands a freed connection to an arbitrary
	// waiter, which under a burst of webhooks turned into a long latency
	// tail; waiting on a channel is first come, first served.
	enqueueGate chan struct{}
	// events is the group committer of EnqueueEvent (batch.go).
	events *eventBatcher
	// pump moves accepted deliveries from the intake into event jobs.
	pump *intakePump
	// active are the runs this process is working.
	active activeRuns
	// sched decides which queued run a free worker gets (sched.go).
	sched *scheduler
	// stopping is set by Stop so workers can tell a shutdown from a cancel.
	stopping atomic.Bool

	mu        sync.Mutex
	started   bool
	stopMaint context.CancelFunc
	maintDone chan struct{}
}

// Open connects to the database, runs River's migrations and ours, and
// prunes deliveries older than 30 days. It does not start working jobs:
// EnqueueDelivery works right away, Start begins the workers.
func Open(ctx context.Context, opts Options) (*Queue, error) {
	opts = opts.withDefaults()
	q := &Queue{
		log:         opts.Logger,
		owner:       NewRunID(),
		staleAfter:  opts.StaleAfter,
		enqueueGate: make(chan struct{}, 1),
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &runWorker{q: q})
	river.AddWorker(workers, &eventWorker{q: q})
	cfg := &river.Config{
		Logger: opts.Logger.With("component", "river"),
		Queues: map[string]river.QueueConfig{
			queueName:      {MaxWorkers: opts.Workers, FetchPollInterval: runFetchPoll, FetchCooldown: runFetchCooldown},
			eventQueueName: {MaxWorkers: opts.EventWorkers},
		},
		Workers: workers,
		// A run enforces its own limits (run_timeout); River's timeout and
		// the time-based rescue it drives stay off (see the package comment).
		JobTimeout:  -1,
		MaxAttempts: 1,
	}
	eng, d, err := openEngine(ctx, opts, cfg)
	if err != nil {
		return nil, fmt.Errorf("open queue: %w: %w", ErrUnavailable, err)
	}
	q.eng, q.d, q.q = eng, d, newQueries(d)
	q.sched = newScheduler(d, opts)
	if err := q.init(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("open queue: %w: %w", ErrUnavailable, err), eng.close())
	}
	q.events, q.pump = newEventBatcher(), newIntakePump()
	// Deliveries an earlier process accepted but did not turn into event
	// jobs become jobs now, before anything else can take the database.
	if err := q.drainIntake(q.pump); err != nil {
		return nil, errors.Join(fmt.Errorf("open queue: %w: %w", ErrUnavailable, err), eng.close())
	}
	go q.commitEvents(q.events)
	go q.pumpIntake(q.pump)
	return q, nil
}

func openEngine(ctx context.Context, opts Options, cfg *river.Config) (engine, dialect, error) {
	switch {
	case opts.DatabaseURL == "":
		eng, err := openSQLite(ctx, opts.DataDir, cfg)
		return eng, dialectSQLite(), err
	case strings.HasPrefix(opts.DatabaseURL, "postgres://"), strings.HasPrefix(opts.DatabaseURL, "postgresql://"):
		eng, err := openPostgres(ctx, opts.DatabaseURL, cfg)
		return eng, dialectPostgres(), err
	default:
		// Never echo the URL: it may carry a password.
		return nil, dialect{}, errors.New("database url: want a postgres:// URL")
	}
}

func (q *Queue) init(ctx context.Context) error {
	if err := q.eng.migrate(ctx, q.d, q.log); err != nil {
		return err
	}
	return q.prune(ctx, time.Now().Add(-retention))
}

// Close releases the database. Call Stop first for a graceful shutdown;
// Close cancels any run still in progress.
func (q *Queue) Close() error {
	q.mu.Lock()
	started := q.started
	q.mu.Unlock()
	if started {
		ctx, cancel := context.WithTimeout(context.Background(), hardStopWait)
		defer cancel()
		if err := q.Stop(ctx); err != nil {
			q.log.Warn("queue: stop on close", "err", err)
		}
	}
	q.events.shutdown()
	q.pump.shutdown()
	return q.eng.close()
}

// unavailable marks a database failure for the HTTP layer.
func unavailable(op string, err error) error {
	return fmt.Errorf("%s: %w: %w", op, ErrUnavailable, err)
}

func nowMillis() int64 { return time.Now().UnixMilli() }
