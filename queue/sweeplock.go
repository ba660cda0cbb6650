package queue

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// The sweep lock. Replicas sharing a Postgres queue sweep their data dirs
// by the same retention and ask the same queue (and, opted in, delete run
// branches on the same remotes), so one sweep at a time is enough: a
// replica that finds another sweeping skips that pass. The lock is a
// session-level advisory lock on a connection of its own, held for the
// pass: a replica that dies mid-sweep drops its connection and with it the
// lock. SQLite has one server per data dir (and one writer), and sweeping
// is idempotent, so there the lock is always free.

// sweepLockKey is the advisory lock's key, another constant than the
// schema's and the scheduler's: "kilro{" in ASCII.
const sweepLockKey = 107105108114111123

// unlockTimeout bounds releasing the lock when the sweep's context has
// ended.
const unlockTimeout = 10 * time.Second

// TrySweepLock takes the sweep lock if no other process holds it. ok is
// false when another holds it; otherwise unlock releases it (call it
// once).
func (q *Queue) TrySweepLock(ctx context.Context) (unlock func(), ok bool, err error) {
	unlock, ok, err = q.eng.tryLock(ctx, sweepLockKey)
	if err != nil {
		return nil, false, unavailable("sweep lock", err)
	}
	return unlock, ok, nil
}

// pgTryLock takes a session advisory lock on a connection held until
// unlock. A connection whose unlock fails is closed, not returned to the
// pool still holding the lock.
func pgTryLock(pool *pgxpool.Pool) func(ctx context.Context, key int64) (func(), bool, error) {
	return func(ctx context.Context, key int64) (func(), bool, error) {
		conn, err := pool.Acquire(ctx)
		if err != nil {
			return nil, false, err
		}
		var ok bool
		if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&ok); err != nil {
			conn.Release()
			return nil, false, fmt.Errorf("advisory lock: %w", err)
		}
		if !ok {
			conn.Release()
			return nil, false, nil
		}
		unlock := func() {
			ctx, cancel := context.WithTimeout(context.Background(), unlockTimeout)
			defer cancel()
			if _, err := conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, key); err != nil {
				_ = conn.Conn().Close(ctx)
			}
			conn.Release()
		}
		return unlock, true, nil
	}
}
