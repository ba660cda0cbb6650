package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kilroy-bot/kilroy-bot/queue"
)

// defaultDatabaseWait bounds how long serve waits at start for a Postgres
// that is not up yet: long enough for a database container started beside
// the bot, short enough that a wrong host fails the start visibly.
const defaultDatabaseWait = 2 * time.Minute

// Backoff between attempts: from the first to the last, doubling.
const (
	databaseRetryFirst = 250 * time.Millisecond
	databaseRetryMax   = 5 * time.Second
)

// openQueueWaiting opens the queue. With Postgres it retries, with
// backoff, for up to wait while the database cannot be reached or is
// still starting (a container that restarts at once would only spin),
// logging what it waits for; a bad URL, a refused login or a missing
// database fail at once, since waiting cannot mend them.
func openQueueWaiting(ctx context.Context, opts queue.Options, wait time.Duration, logger *slog.Logger) (*queue.Queue, error) {
	if opts.DatabaseURL == "" || wait <= 0 {
		return queue.Open(ctx, opts)
	}
	pc, err := pgconn.ParseConfig(opts.DatabaseURL)
	if err != nil {
		return queue.Open(ctx, opts) // its error says what is wrong, without the URL
	}
	target := postgresTarget(pc)
	start := time.Now()
	delay := databaseRetryFirst
	for attempt := 1; ; attempt++ {
		q, err := queue.Open(ctx, opts)
		if err == nil {
			if attempt > 1 {
				logger.InfoContext(ctx, "serve: postgres is up", "at", target, "waited", time.Since(start).Round(time.Millisecond))
			}
			return q, nil
		}
		if !waitable(err) {
			return nil, err
		}
		if time.Since(start)+delay > wait {
			return nil, fmt.Errorf("gave up waiting for postgres at %s after %s (%d attempts): %w", target, wait, attempt, err)
		}
		logger.WarnContext(ctx, "serve: waiting for postgres", "at", target, "attempt", attempt,
			"retry_in", delay, "gives_up_in", (wait - time.Since(start)).Round(time.Second), "err", err)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for postgres at %s: %w", target, context.Cause(ctx))
		case <-time.After(delay):
		}
		delay = min(2*delay, databaseRetryMax)
	}
}

// waitable reports whether err may go away by itself: the queue's
// database unavailable, but not because Postgres refused the login
// (class 28) or has no such database (3D000).
func waitable(err error) bool {
	if !errors.Is(err, queue.ErrUnavailable) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return !strings.HasPrefix(pgErr.Code, "28") && pgErr.Code != "3D000"
	}
	return true
}

// postgresTarget names the server and database of a URL, never its user
// or password: "db:5432/kilroy".
func postgresTarget(pc *pgconn.Config) string {
	return pc.Host + ":" + strconv.Itoa(int(pc.Port)) + "/" + pc.Database
}
