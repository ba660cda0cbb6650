//go:build unix

package queue

import (
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"testing"
	"time"
)

func postgresOptsOpener(url string) optsOpener {
	return func(t testing.TB, o Options) *Queue {
		t.Helper()
		o.DatabaseURL, o.Logger = url, testLogger(t)
		return openWith(t, o)
	}
}

// TestSchedPostgres runs the scheduler's contract on Postgres, each part
// on a database of its own, and checks that a cap holds across replicas.
func TestSchedPostgres(t *testing.T) {
	url := startPostgres(t)
	t.Run("fair", func(t *testing.T) { testSchedFair(t, postgresOptsOpener(freshDB(t, url))) })
	t.Run("caps", func(t *testing.T) { testSchedCaps(t, postgresOptsOpener(freshDB(t, url))) })
	t.Run("replicas", func(t *testing.T) { testSchedReplicas(t, postgresOptsOpener(freshDB(t, url))) })
}

// testSchedReplicas: two processes with a worker each and a cap of one
// run per repository never run two runs of the repository at once,
// although each has a worker free.
func testSchedReplicas(t *testing.T, open optsOpener) {
	a := open(t, Options{Workers: 1, Caps: Caps{PerRepository: 1}})
	b := open(t, Options{Workers: 1, Caps: Caps{PerRepository: 1}})
	var dl deliveries
	first := enqueue(t, a, dl.next(), tenantArgs(1, "octo/widgets", 1)).Jobs[0].RunID
	second := enqueue(t, a, dl.next(), tenantArgs(1, "octo/widgets", 2)).Jobs[0].RunID
	g := newGatedRuns()
	startQueue(t, a, g.handle)
	startQueue(t, b, g.handle)
	if job := recv(t, g.started, "the first run to start"); job.RunID != first {
		t.Fatalf("started %s, want %s", job.RunID, first)
	}
	// Both replicas pass their dispatch tick while the first run holds
	// the repository's one slot.
	deadline := time.Now().Add(3 * dispatchEvery)
	for time.Now().Before(deadline) {
		select {
		case job := <-g.started:
			t.Fatalf("run %s started while %s held the repository's only slot", job.RunID, first)
		case <-time.After(50 * time.Millisecond):
		}
	}
	g.finish(first)
	if job := recv(t, g.started, "the second run to start"); job.RunID != second {
		t.Fatalf("started %s, want %s", job.RunID, second)
	}
	g.finish(second)
}

// freshDB creates a database of its own for a test on the server at url
// and returns its URL.
func freshDB(t testing.TB, url string) string {
	t.Helper()
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	name := fmt.Sprintf("t%d", time.Now().UnixNano())
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	out := strings.Replace(url, "/postgres?", "/"+name+"?", 1)
	if out == url {
		t.Fatalf("no database name in %s", url)
	}
	return out
}
