//go:build unix

package queue

import (
	"context"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/queue/pgtest"
)

// startPostgres starts a throwaway server (pgtest.Start).
func startPostgres(t *testing.T) string { return pgtest.Start(t) }

func postgresOpener(url string) opener {
	return func(t testing.TB) *Queue {
		t.Helper()
		q, err := Open(context.Background(), Options{DatabaseURL: url, Workers: 4, Logger: testLogger(t)})
		if err != nil {
			t.Fatalf("Open(postgres): %v", err)
		}
		t.Cleanup(func() { _ = q.Close() })
		return q
	}
}

func TestCorePostgres(t *testing.T) {
	testCore(t, postgresOpener(startPostgres(t)))
}
