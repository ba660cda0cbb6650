//go:build unix

package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/queue"
	"github.com/kilroy-bot/kilroy-bot/queue/pgtest"
)

// Postgres comes up after serve starts (a database container started
// beside the bot): serve logs what it waits for, keeps trying with
// backoff, and opens the queue once the database answers.
func TestServeWaitsForLatePostgres(t *testing.T) {
	addr := closedPort(t)
	var logs syncBuffer
	type result struct {
		q   *queue.Queue
		err error
	}
	done := make(chan result, 1)
	go func() {
		q, err := openQueueWaiting(t.Context(), queue.Options{DataDir: t.TempDir(), DatabaseURL: "postgres://kilroy:pw-not-logged@" + addr + "/postgres?sslmode=disable", Workers: 1},
			2*time.Minute, newTestLogger(&logs))
		done <- result{q, err}
	}()
	waitFor(t, func() bool { return strings.Count(logs.String(), "serve: waiting for postgres") >= 2 }, "two waiting lines", &logs)
	proxyTo(t, addr, pgtest.Start(t)) // Postgres is up now, at addr

	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("openQueueWaiting: %v\nlogs:\n%s", r.err, logs.String())
		}
		r.q.Close()
	case <-time.After(time.Minute):
		t.Fatalf("the queue did not open within a minute of Postgres coming up\nlogs:\n%s", logs.String())
	}
	for _, want := range []string{`"at":"` + addr + `/postgres"`, `"retry_in"`, "serve: postgres is up"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs do not say %s:\n%s", want, logs.String())
		}
	}
	if strings.Contains(logs.String(), "pw-not-logged") {
		t.Errorf("logs carry the password:\n%s", logs.String())
	}
}

// Postgres never comes: serve gives up after the wait, saying where it
// waited and how often it tried. A URL pgx cannot parse is not waited for.
func TestServeGivesUpOnPostgres(t *testing.T) {
	addr := closedPort(t)
	var logs syncBuffer
	start := time.Now()
	_, err := openQueueWaiting(t.Context(), queue.Options{DataDir: t.TempDir(), DatabaseURL: "postgres://kilroy@" + addr + "/kilroy?sslmode=disable"},
		2*time.Second, newTestLogger(&logs))
	if err == nil || !strings.Contains(err.Error(), "gave up waiting for postgres at "+addr+"/kilroy after 2s (") {
		t.Fatalf("error %v, want one saying it gave up waiting for %s", err, addr)
	}
	if n := strings.Count(logs.String(), "serve: waiting for postgres"); n < 2 {
		t.Errorf("%d waiting lines, want some:\n%s", n, logs.String())
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("gave up after %s, want about 2s", took)
	}

	logs = syncBuffer{}
	_, err = openQueueWaiting(t.Context(), queue.Options{DataDir: t.TempDir(), DatabaseURL: "postgres://kilroy@" + addr + "/kilroy?sslmode=nonsense"},
		time.Minute, newTestLogger(&logs))
	if err == nil || strings.Contains(logs.String(), "waiting") {
		t.Errorf("a bad URL: error %v, logs %s; want an error and no waiting", err, logs.String())
	}
}

// closedPort is a 127.0.0.1 address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// proxyTo listens on addr and relays each connection to the unix socket
// of the Postgres pgURL names (pgtest listens on a socket only).
func proxyTo(t *testing.T, addr, pgURL string) {
	t.Helper()
	u, err := url.Parse(pgURL)
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(u.Query().Get("host"), ".s.PGSQL."+u.Query().Get("port"))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen on %s again: %v", addr, err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				s, err := net.Dial("unix", sock)
				if err != nil {
					return
				}
				defer s.Close()
				go io.Copy(s, c)
				io.Copy(c, s)
			}()
		}
	}()
}

// waitFor polls cond until it holds, failing after a minute.
func waitFor(t *testing.T, cond func() bool, what string, logs fmt.Stringer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("no %s within a minute:\n%s", what, logs)
		case <-time.After(50 * time.Millisecond): // polling a log, not synchronising
		}
	}
}
