//go:build unix

package main

import (
	"context"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/queue"
	"github.com/kilroy-bot/kilroy-bot/queue/pgtest"
)

// TestGCServerWhileAReplicaSweeps: with a Postgres queue, gc on a
// server's data dir takes the sweep lock as the replicas do; while one
// holds it gc removes nothing and exits 1 saying so, and a dry run still
// lists.
func TestGCServerWhileAReplicaSweeps(t *testing.T) {
	url := pgtest.Start(t)
	ctx := context.Background()
	q, err := queue.Open(ctx, queue.Options{DatabaseURL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Close() })
	dataDir := t.TempDir()
	run := queue.NewRunID()
	oldRunDirs(t, dataDir, run)

	unlock, ok, err := q.TrySweepLock(ctx)
	if err != nil || !ok {
		t.Fatalf("TrySweepLock = %v, %v; want the lock", ok, err)
	}
	code, stdout, stderr := runCmd("gc", "--data-dir", dataDir, "--database-url", url)
	if code != 1 || !strings.Contains(stderr, "replica is sweeping") || strings.Contains(stdout, run) {
		t.Errorf("gc while a replica sweeps: exit %d, stdout %q, stderr %q; want exit 1, nothing removed", code, stdout, stderr)
	}
	code, stdout, stderr = runCmd("gc", "--data-dir", dataDir, "--database-url", url, "--dry-run")
	if code != 0 || !strings.Contains(stdout, "would remove run directory "+run) {
		t.Errorf("gc --dry-run while a replica sweeps: exit %d, stdout %q, stderr %q; want %s listed", code, stdout, stderr, run)
	}
	unlock()
	code, stdout, stderr = runCmd("gc", "--data-dir", dataDir, "--database-url", url)
	if code != 0 || !strings.Contains(stdout, "removed run directory "+run) {
		t.Errorf("gc once the lock is free: exit %d, stdout %q, stderr %q; want %s removed", code, stdout, stderr, run)
	}
}
