package queue

import (
	"context"
	"database/sql"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// rows is the part of a result set our queries read; *sql.Rows (wrapped) and
// pgx.Rows both fit.
type rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// sqlExec runs our own statements on a pool or inside a transaction. It is
// all the SQL surface this package needs, so each driver adapts in a few
// lines and the statements stay shared.
type sqlExec interface {
	exec(ctx context.Context, query string, args ...any) (int64, error)
	query(ctx context.Context, query string, args ...any) (rows, error)
}

// stdDB is what *sql.DB and *sql.Tx have in common.
type stdDB interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

type stdExec struct{ db stdDB }

func (e stdExec) exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := e.db.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (e stdExec) query(ctx context.Context, query string, args ...any) (rows, error) {
	r, err := e.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return stdRows{r}, nil
}

type stdRows struct{ *sql.Rows }

// Close drops the error: Err reports anything that went wrong while reading.
func (r stdRows) Close() { _ = r.Rows.Close() }

// pgxDB is what *pgxpool.Pool and pgx.Tx have in common.
type pgxDB interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

type pgxExec struct{ db pgxDB }

func (e pgxExec) exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := e.db.Exec(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

func (e pgxExec) query(ctx context.Context, query string, args ...any) (rows, error) {
	return e.db.Query(ctx, query, args...)
}
