//go:build unix

package server

import (
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/kilroy-bot/kilroy-bot/internal/gittest"
	"github.com/kilroy-bot/kilroy-bot/queue"
	"github.com/kilroy-bot/kilroy-bot/queue/pgtest"
	"github.com/kilroy-bot/kilroy-bot/runner/gc"
	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
)

// TestSweepOneReplicaAtATime: two replicas on one Postgres queue, each
// with its own data dir. While one sweeps (holds the queue's sweep lock)
// the other's sweep skips its pass and deletes nothing; once the lock is
// free it sweeps.
func TestSweepOneReplicaAtATime(t *testing.T) {
	gittest.Path(t)
	url := pgtest.Start(t)
	ctx := context.Background()
	open := func() *queue.Queue {
		q, err := queue.Open(ctx, queue.Options{DatabaseURL: url})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = q.Close() })
		return q
	}
	sweeping, q := open(), open()
	dataDir := t.TempDir()
	srv, err := NewServer(ServerOptions{DataDir: dataDir, Queue: q, Env: testEnv(t),
		GitHub:      func(context.Context, int64) (GitHub, error) { return nil, nil },
		NewReporter: newReporters().New,
		Tokens: func(context.Context, int64, string) (gitops.TokenSource, func(context.Context) error, error) {
			return nil, nil, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	week := 7 * 24 * time.Hour
	run := oldRunDir(t, dataDir, 2*week)
	o := RetentionOptions{Retention: gc.Retention{Runs: week}}

	unlock, ok, err := sweeping.TrySweepLock(ctx)
	if err != nil || !ok {
		t.Fatalf("TrySweepLock = %v, %v; want the lock", ok, err)
	}
	res, err := srv.Sweep(ctx, o)
	if err != nil || !res.Skipped || len(res.Runs) > 0 {
		t.Errorf("Sweep while another replica sweeps = %+v, %v; want skipped", res, err)
	}
	if _, err := os.Stat(run); err != nil {
		t.Errorf("the skipped sweep removed the run directory: %v", err)
	}
	unlock()
	res, err = srv.Sweep(ctx, o)
	if err != nil || res.Skipped || len(res.Runs) != 1 {
		t.Errorf("Sweep once the lock is free = %+v, %v; want the old run removed", res, err)
	}
	if _, err := os.Stat(run); !os.IsNotExist(err) {
		t.Errorf("run directory still there after the sweep: %v", err)
	}
}

// oldRunDir makes a finished run's directory in dataDir whose files last
// changed age ago.
func oldRunDir(t *testing.T, dataDir string, age time.Duration) string {
	t.Helper()
	at := time.Now().Add(-age)
	dir := filepath.Join(dataDir, "runs", ulid.MustNew(ulid.Timestamp(at), rand.Reader).String())
	gittest.WriteFile(t, filepath.Join(dir, "report.md"), "done\n")
	for _, p := range []string{filepath.Join(dir, "report.md"), dir} {
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
