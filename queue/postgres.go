package queue

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

func openPostgres(ctx context.Context, url string, cfg *river.Config) (engine, error) {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		// pgx's parse errors can quote the URL; keep the password out of logs.
		return nil, errors.New("postgres: invalid database url")
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	driver := riverpgxv5.New(pool)
	client, err := river.NewClient(driver, cfg)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("river client: %w", err)
	}
	return &riverEngine[pgx.Tx]{
		client:   client,
		driver:   driver,
		db:       pgxExec{pool},
		begin:    func(ctx context.Context) (pgx.Tx, error) { return pool.Begin(ctx) },
		commit:   func(ctx context.Context, tx pgx.Tx) error { return tx.Commit(ctx) },
		rollback: func(ctx context.Context, tx pgx.Tx) error { return tx.Rollback(ctx) },
		wrapTx:   func(tx pgx.Tx) sqlExec { return pgxExec{tx} },
		closeDB:  func() error { pool.Close(); return nil },
		lock:     pgTryLock(pool),
	}, nil
}
