package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
)

// engine is River plus a database, with the transaction type hidden so the
// rest of the package is written once for SQLite and Postgres.
type engine interface {
	// inTx runs fn in one transaction, committed only if fn returns nil.
	inTx(ctx context.Context, fn func(tx txOps) error) error
	// pool runs statements outside any transaction.
	pool() sqlExec
	// migrate applies River's migrations and our schema.
	migrate(ctx context.Context, d dialect, logger *slog.Logger) error
	jobGet(ctx context.Context, id int64) (*rivertype.JobRow, error)
	start(ctx context.Context) error
	stop(ctx context.Context) error
	stopAndCancel(ctx context.Context) error
	subscribe(kinds ...river.EventKind) (<-chan *river.Event, func())
	// tryLock takes a lock shared by every process on the database, held
	// until unlock; ok is false when another process holds it. Without
	// such locks (SQLite: one process) it always succeeds.
	tryLock(ctx context.Context, key int64) (unlock func(), ok bool, err error)
	close() error
}

// txOps is one open transaction: our SQL and River's transactional calls.
type txOps interface {
	sqlExec
	insertJob(ctx context.Context, args river.JobArgs) (*rivertype.JobInsertResult, error)
	// insertJobs inserts several jobs with one statement; the results are
	// in the order of args.
	insertJobs(ctx context.Context, args []river.JobArgs) ([]*rivertype.JobInsertResult, error)
	cancelJob(ctx context.Context, id int64) error
	// retryJob makes a pending job available to workers.
	retryJob(ctx context.Context, id int64) error
}

// riverEngine implements engine for one driver; the function fields are the
// few places where database/sql and pgx differ.
type riverEngine[TTx any] struct {
	client   *river.Client[TTx]
	driver   riverdriver.Driver[TTx]
	db       sqlExec
	begin    func(ctx context.Context) (TTx, error)
	commit   func(ctx context.Context, tx TTx) error
	rollback func(ctx context.Context, tx TTx) error
	wrapTx   func(tx TTx) sqlExec
	closeDB  func() error
	// lock is tryLock where the database has cross-process locks; nil
	// otherwise.
	lock func(ctx context.Context, key int64) (func(), bool, error)
}

func (e *riverEngine[TTx]) inTx(ctx context.Context, fn func(tx txOps) error) error {
	tx, err := e.begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(&riverTx[TTx]{sqlExec: e.wrapTx(tx), e: e, tx: tx}); err != nil {
		// The rollback must run even when ctx is why fn failed.
		if rbErr := e.rollback(context.WithoutCancel(ctx), tx); rbErr != nil {
			return errors.Join(err, fmt.Errorf("rollback: %w", rbErr))
		}
		return err
	}
	if err := e.commit(ctx, tx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

func (e *riverEngine[TTx]) pool() sqlExec { return e.db }

func (e *riverEngine[TTx]) tryLock(ctx context.Context, key int64) (func(), bool, error) {
	if e.lock == nil {
		return func() {}, true, nil
	}
	return e.lock(ctx, key)
}

func (e *riverEngine[TTx]) migrate(ctx context.Context, d dialect, logger *slog.Logger) error {
	m, err := rivermigrate.New(e.driver, &rivermigrate.Config{Logger: logger})
	if err != nil {
		return fmt.Errorf("river migrator: %w", err)
	}
	// River's migrations run each in their own transaction (Postgres cannot
	// use a new enum value in the transaction that adds it).
	riverUp := func() error {
		if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
			return fmt.Errorf("river migrations: %w", err)
		}
		return nil
	}
	if d.schemaLock == "" {
		// SQLite: one process, one connection; nothing to serialise.
		if err := riverUp(); err != nil {
			return err
		}
		return e.inTx(ctx, func(tx txOps) error { return createSchema(ctx, tx) })
	}
	// Postgres: replicas starting together take turns. The lock is held by
	// our transaction while River migrates on other pool connections.
	return e.inTx(ctx, func(tx txOps) error {
		if _, err := tx.exec(ctx, d.schemaLock); err != nil {
			return fmt.Errorf("schema lock: %w", err)
		}
		if err := riverUp(); err != nil {
			return err
		}
		return createSchema(ctx, tx)
	})
}

func createSchema(ctx context.Context, tx txOps) error {
	for _, stmt := range append(append(append(schema(), resumeSchema()...), schedSchema()...), spendSchema()...) {
		if _, err := tx.exec(ctx, stmt); err != nil {
			return fmt.Errorf("schema %q: %w", firstLine(stmt), err)
		}
	}
	return nil
}

func (e *riverEngine[TTx]) jobGet(ctx context.Context, id int64) (*rivertype.JobRow, error) {
	return e.client.JobGet(ctx, id)
}

func (e *riverEngine[TTx]) start(ctx context.Context) error { return e.client.Start(ctx) }
func (e *riverEngine[TTx]) stop(ctx context.Context) error  { return e.client.Stop(ctx) }
func (e *riverEngine[TTx]) stopAndCancel(ctx context.Context) error {
	return e.client.StopAndCancel(ctx)
}

func (e *riverEngine[TTx]) subscribe(kinds ...river.EventKind) (<-chan *river.Event, func()) {
	return e.client.Subscribe(kinds...)
}

func (e *riverEngine[TTx]) close() error { return e.closeDB() }

type riverTx[TTx any] struct {
	sqlExec
	e  *riverEngine[TTx]
	tx TTx
}

func (t *riverTx[TTx]) insertJob(ctx context.Context, args river.JobArgs) (*rivertype.JobInsertResult, error) {
	return t.e.client.InsertTx(ctx, t.tx, args, insertOptsOf(args))
}

// insertOptsOf inserts run jobs pending, for the scheduler to dispatch
// (sched.go): River takes Pending only from the options of the insert
// call, not from the args' InsertOpts, whose other options still apply.
func insertOptsOf(args river.JobArgs) *river.InsertOpts {
	if _, ok := args.(RunArgs); ok {
		return &river.InsertOpts{Pending: true}
	}
	return nil
}

func (t *riverTx[TTx]) insertJobs(ctx context.Context, args []river.JobArgs) ([]*rivertype.JobInsertResult, error) {
	params := make([]river.InsertManyParams, len(args))
	for i, a := range args {
		params[i] = river.InsertManyParams{Args: a}
	}
	return t.e.client.InsertManyTx(ctx, t.tx, params)
}

// cancelJob cancels a job in the transaction. River marks a running job for
// cancellation and notifies whichever client works it once we commit.
func (t *riverTx[TTx]) cancelJob(ctx context.Context, id int64) error {
	_, err := t.e.client.JobCancelTx(ctx, t.tx, id)
	if errors.Is(err, river.ErrNotFound) {
		// Already cleaned out by River: nothing left to cancel.
		return nil
	}
	return err
}

func (t *riverTx[TTx]) retryJob(ctx context.Context, id int64) error {
	_, err := t.e.client.JobRetryTx(ctx, t.tx, id)
	return err
}
