package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kilroy-bot/kilroy-bot/runpage"
)

// Server limits. GitHub gives up on a delivery after 10 s, so a webhook
// request never needs long; the run page and /metrics are small too.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 60 * time.Second // a 25 MiB delivery on a slow link
	writeTimeout      = 60 * time.Second
	idleTimeout       = 120 * time.Second
	maxHeaderBytes    = 64 << 10
	// drainTimeout bounds the wait for in-flight requests at shutdown.
	drainTimeout = 15 * time.Second
	// hookTimeout is what the shutdown hook gets before it must cancel the
	// runs still going (the queue then waits a bounded time more for them
	// to complete their checks).
	hookTimeout = 30 * time.Second
	// readyTimeout bounds each readiness check.
	readyTimeout = 2 * time.Second
)

// server is serve's HTTP server and what its endpoints read.
type server struct {
	http     *http.Server
	ln       net.Listener
	log      *slog.Logger
	deps     serveDeps
	ready    []readyCheck
	draining atomic.Bool // set at shutdown, so /readyz turns the load balancer away
}

// buildServer mounts the endpoints and listens on cfg.Listen. Serving
// starts with run.
func buildServer(ctx context.Context, cfg serveConfig, deps serveDeps) (*server, error) {
	if deps.Webhook == nil || deps.Pages == nil || deps.Gatherer == nil || deps.Shutdown == nil {
		return nil, errors.New("serve: incomplete wiring: webhook, run pages, metrics and shutdown hook are required")
	}
	if deps.Logger == nil {
		deps.Logger = loggerFrom(ctx)
	}
	s := &server{log: deps.Logger, deps: deps}
	s.ready = append([]readyCheck{{Name: "data dir", Check: dataDirWritable(cfg.DataDir)}}, deps.Ready...)
	s.http = &http.Server{
		Handler:           s.routes(),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		// Requests carry the logger, and are not cancelled when shutdown
		// begins: Shutdown lets them finish.
		BaseContext: func(net.Listener) context.Context { return withLogger(context.WithoutCancel(ctx), s.log) },
		ErrorLog:    slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	s.ln = limitConns(ln, deps.maxConns())
	return s, nil
}

func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST /webhooks/github", s.deps.Webhook)
	mux.Handle("GET /healthz", s.handle(s.healthz))
	mux.Handle("GET /readyz", s.handle(s.readyz))
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.deps.Gatherer, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		ErrorHandling: promhttp.ContinueOnError, // one failing collector must not hide the rest
	}))
	mux.Handle("GET /runs/{id}", s.handle(s.runPage))
	return mux
}

// Addr is where the server listens.
func (s *server) Addr() net.Addr { return s.ln.Addr() }

// run serves until ctx ends or the listener fails, then shuts down: stop
// accepting, let in-flight requests finish, then call the shutdown hook so
// the run workers complete their checks.
func (s *server) run(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.http.Serve(s.ln) }()
	s.log.InfoContext(ctx, "serve: listening", "addr", s.Addr().String())
	stopBackground := s.startBackground(ctx)
	var serveErr error
	select {
	case <-ctx.Done():
		s.log.InfoContext(ctx, "serve: shutting down", "cause", context.Cause(ctx))
	case serveErr = <-errc:
		s.log.ErrorContext(ctx, "serve: listener failed", "err", serveErr)
	}
	s.draining.Store(true)
	stopBackground()
	base := context.WithoutCancel(ctx)
	dctx, cancel := context.WithTimeout(base, drainTimeout)
	drainErr := s.http.Shutdown(dctx)
	cancel()
	if serveErr == nil {
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			serveErr = err
		}
	}
	if drainErr != nil {
		drainErr = fmt.Errorf("drain HTTP requests: %w", drainErr)
	}
	hctx, cancel := context.WithTimeout(base, hookTimeout)
	defer cancel()
	hookErr := s.deps.Shutdown(hctx)
	if hookErr != nil {
		hookErr = fmt.Errorf("shutdown hook: %w", hookErr)
	}
	return errors.Join(serveErr, drainErr, hookErr)
}

// startBackground starts deps.Background, now that the listener takes
// the deliveries it may ask GitHub for; the returned stop cancels it and
// waits for it to return.
func (s *server) startBackground(ctx context.Context) (stop func()) {
	if s.deps.Background == nil {
		return func() {}
	}
	bctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.deps.Background(bctx)
	}()
	return func() { cancel(); <-done }
}

// handlerFunc is an endpoint that reports failure as an error; handle
// turns it into a response.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle is the one place that maps an endpoint's error to a status code
// and a message, and logs it.
func (s *server) handle(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := h(w, r)
		if err == nil {
			return
		}
		code, msg := statusOf(err)
		level := slog.LevelWarn
		if code >= http.StatusInternalServerError && code != http.StatusServiceUnavailable {
			level = slog.LevelError
		}
		// The path only: the query of a run page carries its token.
		loggerFrom(r.Context()).Log(r.Context(), level, "serve: request failed",
			"method", r.Method, "path", r.URL.Path, "status", code, "err", s.deps.Redactor.Redact(err.Error()))
		w.Header().Set("Cache-Control", "no-store")
		http.Error(w, msg, code)
	})
}

// notReadyError lists the readiness checks that failed.
type notReadyError struct{ reasons []string }

func (e *notReadyError) Error() string { return "not ready: " + strings.Join(e.reasons, "; ") }

// notFoundBody is what http.NotFound says, less the newline http.Error adds.
const notFoundBody = "404 page not found"

// errNoRunToken is a run page asked for without the token of its link:
// typed in by hand, or the link cut short. It is answered the same for
// every id, so it tells nothing about which runs exist.
var errNoRunToken = errors.New("run page without its token")

// noRunTokenBody is the 404 with a hint, for errNoRunToken.
const noRunTokenBody = notFoundBody + ": a run page opens only from its full link, which carries a token (?t=...). " +
	"Follow the Details link of the run's check on GitHub."

func statusOf(err error) (int, string) {
	if nr, ok := errors.AsType[*notReadyError](err); ok {
		return http.StatusServiceUnavailable, nr.Error()
	}
	switch {
	case errors.Is(err, errNoRunToken):
		return http.StatusNotFound, noRunTokenBody
	case errors.Is(err, runpage.ErrInvalidID):
		return http.StatusBadRequest, "invalid run id: want a ULID such as 01J9Z8Q4M6V3N5R7T9W1X3Y5Z7"
	case errors.Is(err, runpage.ErrNotFound), errors.Is(err, runpage.ErrNoAccess):
		// One answer for both, and the mux's own: a page asked for
		// without its token must not tell whether the run exists.
		return http.StatusNotFound, notFoundBody
	}
	return http.StatusInternalServerError, "internal error"
}

// healthz says the process serves HTTP; it checks nothing else, so that
// a slow database never gets the process restarted.
func (s *server) healthz(w http.ResponseWriter, _ *http.Request) error {
	writePlain(w, http.StatusOK, "ok\n")
	return nil
}

// readyz says whether this process can take deliveries: the queue
// answers and the data dir takes writes. Failures name the check and the
// reason, redacted.
func (s *server) readyz(w http.ResponseWriter, r *http.Request) error {
	if s.draining.Load() {
		return &notReadyError{reasons: []string{"shutting down"}}
	}
	var reasons []string
	for _, c := range s.ready {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		err := c.Check(ctx)
		cancel()
		if err != nil {
			reasons = append(reasons, c.Name+": "+s.deps.Redactor.Redact(err.Error()))
		}
	}
	if len(reasons) > 0 {
		return &notReadyError{reasons: reasons}
	}
	writePlain(w, http.StatusOK, "ready\n")
	return nil
}

// runPage renders /runs/{id}?t=TOKEN into a buffer first, so that a
// failure still gets its status code. With a wrong token it is a 404,
// like a page that does not exist; with none, a 404 saying where the
// link with its token is.
func (s *server) runPage(w http.ResponseWriter, r *http.Request) error {
	token := r.URL.Query().Get(runpage.TokenParam)
	if token == "" {
		return errNoRunToken
	}
	run, err := s.deps.Pages.Open(r.PathValue("id"), token)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := s.deps.Pages.Render(&buf, run); err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", runpage.ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer") // the token stays off the commit links' Referer
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes()) // a reader that went away is not a server error
	return nil
}

func writePlain(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(body))
}

// dataDirWritable checks that a file can be created in dir: a full or
// read-only disk stops runs and the SQLite queue.
func dataDirWritable(dir string) func(context.Context) error {
	return func(context.Context) error {
		f, err := os.CreateTemp(dir, ".readyz-*")
		if err != nil {
			return fmt.Errorf("not writable: %w", pathErr(err))
		}
		name := f.Name()
		return errors.Join(f.Close(), os.Remove(name))
	}
}
