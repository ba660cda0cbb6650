package queue

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// The scheduler. A run job is inserted pending, so River does not hand it
// to a worker by itself; the scheduler decides which run goes next and
// makes its job available (River's JobRetry). The decision is made in the
// database, in one transaction that every process takes in turn (an
// advisory lock with Postgres; SQLite has one writer), so replicas share
// one order and one count of what is going:
//
//   - a process dispatches at most as many runs as it has idle workers,
//     less those it dispatched that have not started yet;
//   - each pick goes to the least-served installation: fewest runs going
//     (running or dispatched), then the one whose last run was dispatched
//     longest ago; within it the oldest queued run (pick);
//   - a run whose installation or repository has Caps runs going waits,
//     queued, and Options.Capped hears why, once per cause.
//
// A pass runs when runs are enqueued, when a run of this process ends,
// and every dispatchEvery, which is how a replica learns of runs another
// one enqueued or finished. River fetches a dispatched job within its
// fetch poll interval (runFetchPoll).

const (
	dispatchEvery = time.Second
	// runFetchPoll is how often River looks for available run jobs: a
	// dispatched job is not announced to River, so this bounds the time
	// from dispatch to start.
	runFetchPoll     = 100 * time.Millisecond
	runFetchCooldown = 10 * time.Millisecond
	// tellBacklog is how many capped runs may wait for Options.Capped;
	// more are told on a later pass.
	tellBacklog = 64
	// tellTimeout bounds one call of Options.Capped.
	tellTimeout = 30 * time.Second
)

// CappedRun is a queued run held back by a cap, and why.
type CappedRun struct {
	Run
	InstallationID int64
	// Reason says which cap, as a sentence fragment such as "octo/widgets
	// has 1 run going, this server's limit per repository (…)".
	Reason string
}

// scheduler is the queue's dispatch state.
type scheduler struct {
	q       schedQueries
	caps    Caps
	workers int
	// waiting hears of runs held back by a cap; nil for none. tell feeds
	// it (tellLoop), so a slow hook never holds up dispatching.
	waiting func(ctx context.Context, w CappedRun) error
	tell    chan CappedRun
	kick    chan struct{}
	// passes and passTime count the dispatch transactions and the time
	// spent in them, for the benchmark's cost of the scheduler.
	passes, passTime atomic.Int64
}

func newScheduler(d dialect, opts Options) *scheduler {
	return &scheduler{q: newSchedQueries(d), caps: opts.Caps, workers: opts.Workers,
		waiting: opts.Capped, tell: make(chan CappedRun, tellBacklog), kick: make(chan struct{}, 1)}
}

// kickDispatch asks for a dispatch pass soon; it never blocks.
func (q *Queue) kickDispatch() {
	select {
	case q.sched.kick <- struct{}{}:
	default:
	}
}

// recordSched records a new run for the scheduler, in its enqueue
// transaction.
func (q *Queue) recordSched(ctx context.Context, tx txOps, args RunArgs, jobID, now int64) error {
	if _, err := tx.exec(ctx, q.sched.q.insert, args.RunID, args.InstallationID, args.Repo, now, jobID); err != nil {
		return fmt.Errorf("schedule run %s: %w", args.RunID, err)
	}
	return nil
}

// dispatchLoop runs dispatch passes until ctx ends.
func (q *Queue) dispatchLoop(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	telling := make(chan struct{})
	go q.tellLoop(ctx, telling)
	defer func() { <-telling }()
	tick := time.NewTicker(dispatchEvery)
	defer tick.Stop()
	for {
		clean := false
		select {
		case <-ctx.Done():
			return
		case <-q.sched.kick:
		case <-tick.C:
			clean = true
		}
		if q.stopping.Load() {
			continue
		}
		if err := q.dispatch(ctx, clean); err != nil && ctx.Err() == nil {
			q.log.Error("queue: dispatch runs", "err", err)
		}
	}
}

// dispatch makes the next runs available to this process's idle workers.
func (q *Queue) dispatch(ctx context.Context, clean bool) error {
	idle := q.sched.workers - q.active.len()
	if idle <= 0 {
		return nil
	}
	if n, err := q.count(ctx, "waiting runs", q.sched.q.anyWaiting); err != nil || n == 0 {
		return err
	}
	var held []CappedRun
	start := time.Now()
	err := q.eng.inTx(ctx, func(tx txOps) error {
		var err error
		held, err = q.dispatchTx(ctx, tx, idle, clean)
		return err
	})
	q.sched.passes.Add(1)
	q.sched.passTime.Add(int64(time.Since(start)))
	if err != nil {
		return err
	}
	q.tellWaiting(ctx, held)
	return nil
}

// dispatchTx dispatches up to idle runs, less those this process
// dispatched that have not started, and returns the runs newly held back
// by a cap. clean first drops the rows of finished runs. It reads the
// state once and keeps it up to date itself: a pass is a few round trips
// whatever it dispatches.
func (q *Queue) dispatchTx(ctx context.Context, tx txOps, idle int, clean bool) ([]CappedRun, error) {
	sq := q.sched.q
	if sq.lock != "" {
		if _, err := tx.exec(ctx, sq.lock); err != nil {
			return nil, fmt.Errorf("dispatch lock: %w", err)
		}
	}
	if clean {
		if _, err := tx.exec(ctx, sq.clean); err != nil {
			return nil, fmt.Errorf("clean finished runs: %w", err)
		}
	}
	pending, err := countTx(ctx, tx, sq.dispatchedBy, q.owner)
	if err != nil {
		return nil, err
	}
	snap, err := q.snapshot(ctx, tx)
	if err != nil {
		return nil, err
	}
	for n := idle - pending; n > 0; {
		g, ok := pick(snap, q.sched.caps)
		if !ok {
			break
		}
		now, found, err := q.dispatchOldest(ctx, tx, g)
		if err != nil {
			return nil, err
		}
		if !found {
			snap.drop(g) // its last run went in this pass
			continue
		}
		snap.dispatched(g, now)
		n--
	}
	return q.markCapped(ctx, tx, snap)
}

// dispatchOldest makes the oldest queued run of g available to workers
// and says when; found is false when g has no run left waiting.
func (q *Queue) dispatchOldest(ctx context.Context, tx txOps, g schedGroup) (now int64, found bool, err error) {
	sq := q.sched.q
	now = nowMillis()
	var runID string
	var jobID int64
	err = scanEach(ctx, tx, sq.dispatch, func(r rows) error {
		found = true
		return r.Scan(&runID, &jobID)
	}, now, q.owner, g.Installation, g.Repo)
	if err != nil || !found {
		return 0, false, err
	}
	if _, err := tx.exec(ctx, sq.touch, g.Installation, now); err != nil {
		return 0, false, fmt.Errorf("dispatch run %s: %w", runID, err)
	}
	if err := tx.retryJob(ctx, jobID); err != nil {
		return 0, false, fmt.Errorf("dispatch run %s: make job %d available: %w", runID, jobID, err)
	}
	return now, true, nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// len counts the runs this process is working.
func (a *activeRuns) len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.m)
}
