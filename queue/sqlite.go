package queue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver, no cgo
)

// dbFile is the SQLite database's name inside the data dir.
const dbFile = "kilroy.db"

// sqliteDSN turns on WAL (readers do not block the writer), waits on a busy
// database instead of failing, enforces foreign keys and begins every
// transaction IMMEDIATE, so a read-then-write transaction cannot fail with
// SQLITE_BUSY halfway. synchronous=FULL (SQLite's default, said here so it
// stays) syncs the WAL at every commit, so an acknowledged delivery also
// survives a power loss; group commit (batch.go) pays that once per batch.
// NORMAL measured no faster here.
func sqliteDSN(path string) string {
	return "file:" + path +
		"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(FULL)&_txlock=immediate"
}

func openSQLite(ctx context.Context, dir string, cfg *river.Config) (engine, error) {
	if dir == "" {
		return nil, errors.New("no data dir for the SQLite database")
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	path := filepath.Join(dir, dbFile)
	db, err := sql.Open("sqlite", sqliteDSN(path))
	if err != nil {
		return nil, fmt.Errorf("sqlite %s: %w", path, err)
	}
	// SQLite has one writer anyway; River's SQLite driver asks for a single
	// connection so its concurrent internals queue instead of hitting
	// SQLITE_BUSY.
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("sqlite %s: %w", path, err), db.Close())
	}
	driver := riversqlite.New(db)
	client, err := river.NewClient(driver, cfg)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("river client: %w", err), db.Close())
	}
	return &riverEngine[*sql.Tx]{
		client:   client,
		driver:   driver,
		db:       stdExec{db},
		begin:    func(ctx context.Context) (*sql.Tx, error) { return db.BeginTx(ctx, nil) },
		commit:   func(_ context.Context, tx *sql.Tx) error { return tx.Commit() },
		rollback: func(_ context.Context, tx *sql.Tx) error { return tx.Rollback() },
		wrapTx:   func(tx *sql.Tx) sqlExec { return stdExec{tx} },
		closeDB:  db.Close,
	}, nil
}
