//go:build unix

package queue

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestSweepLockPostgres: one replica at a time holds the sweep lock; the
// others are told it is taken until the holder unlocks, or until its
// connection dies (a replica killed mid-sweep).
func TestSweepLockPostgres(t *testing.T) {
	url := freshDB(t, startPostgres(t))
	open := postgresOptsOpener(url)
	a, b := open(t, Options{}), open(t, Options{})
	ctx := context.Background()

	unlockA := mustLock(t, a, true)
	mustLock(t, b, false)
	unlockA()
	unlockB := mustLock(t, b, true)
	mustLock(t, a, false)

	// b's replica dies: its connection goes, and with it the lock.
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var killed int
	if err := conn.QueryRow(ctx, `SELECT COUNT(pg_terminate_backend(pid)) FROM pg_locks
		WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()`).Scan(&killed); err != nil {
		t.Fatal(err)
	}
	if killed != 1 {
		t.Fatalf("terminated %d backends holding advisory locks, want 1 (b's)", killed)
	}
	unlockA = lockWithin(t, a, 10*time.Second) // the backend exits soon after the signal
	unlockB()                                  // its connection is gone: closed, not handed back to the pool
	mustLock(t, b, false)
	unlockA()
	mustLock(t, b, true)()
}

// TestSweepLockSQLite: with SQLite the lock is always free.
func TestSweepLockSQLite(t *testing.T) {
	q := sqliteOptsOpener(t.TempDir())(t, Options{})
	unlock := mustLock(t, q, true)
	mustLock(t, q, true)()
	unlock()
}

// mustLock calls TrySweepLock and fails unless ok is want; it returns the
// unlock of a lock taken.
func mustLock(t *testing.T, q *Queue, want bool) func() {
	t.Helper()
	unlock, ok, err := q.TrySweepLock(context.Background())
	if err != nil {
		t.Fatalf("TrySweepLock: %v", err)
	}
	if ok != want {
		t.Fatalf("TrySweepLock ok = %v, want %v", ok, want)
	}
	return unlock
}

// lockWithin polls TrySweepLock until it takes the lock, failing after d.
func lockWithin(t *testing.T, q *Queue, d time.Duration) func() {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		unlock, ok, err := q.TrySweepLock(context.Background())
		if err != nil {
			t.Fatalf("TrySweepLock: %v", err)
		}
		if ok {
			return unlock
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sweep lock still taken %s later", d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
