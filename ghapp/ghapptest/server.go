package ghapptest

import (
	"bytes"
	"crypto/rsa"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// maxBody caps the request bodies the fake reads into memory. REST bodies are
// small; git packs pushed in tests stay far below it.
const maxBody = 64 << 20

// Server is a fake GitHub. Create it with New; it stops when the test ends.
type Server struct {
	t        testing.TB
	srv      *httptest.Server
	mux      http.Handler
	key      *rsa.PrivateKey
	cfg      config
	git      gitEnv
	gitRoot  string // GIT_PROJECT_ROOT: <owner>/<name>.git below it
	schemas  *checkSchemas
	gitServe http.Handler

	mu sync.Mutex
	st state
}

// state is everything the fake remembers; guarded by Server.mu.
type state struct {
	nextID        int64
	repos         map[string]*repoState // by lower-case "owner/name"
	installations map[int64]*installation
	byOwner       map[string]int64 // lower-case owner login → installation id
	tokens        map[string]*tokenState
	faults        []*Fault
	requests      []Request
	manifestPosts []ManifestPost
	manifestCodes map[string]*pendingManifest
	converted     []ConvertedApp
	hook          webhookTarget
	deliveries    []HookDelivery // webhook delivery attempts, oldest first
}

type config struct {
	appID    int64
	appSlug  string
	perms    map[string]string
	clientID string
	addr     string // where to listen; "" for httptest's loopback port
}

// Option configures a Server.
type Option func(*config)

// WithAppID sets the App's id (default 4242).
func WithAppID(id int64) Option { return func(c *config) { c.appID = id } }

// WithAppSlug sets the App's slug (default "kilroy-bot"); comments it posts
// are by "<slug>[bot]".
func WithAppSlug(slug string) Option { return func(c *config) { c.appSlug = slug } }

// WithInstallationPermissions sets what every installation grants, as GitHub
// permission names to "read" or "write". The default grants what
// kilroy-bot asks for: checks, contents, issues and pull_requests write,
// merge_queues and metadata read.
func WithInstallationPermissions(p map[string]string) Option {
	return func(c *config) { c.perms = maps.Clone(p) }
}

// WithListenAddr makes the server listen on addr ("host:port", port 0 for
// any) instead of a loopback port, for a bot that is not on this host's
// loopback: one in a container reaches the host at its network's gateway.
// The server's URLs then name that address.
func WithListenAddr(addr string) Option { return func(c *config) { c.addr = addr } }

// New starts a fake GitHub for t and closes it when t ends. It skips t when
// the shared GitHub fixtures it validates check runs against are missing.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	cfg := config{
		appID:   4242,
		appSlug: "kilroy-bot",
		perms: map[string]string{
			"checks": "write", "contents": "write", "issues": "write",
			"pull_requests": "write", "merge_queues": "read", "metadata": "read",
		},
	}
	for _, o := range opts {
		o(&cfg)
	}
	cfg.clientID = fmt.Sprintf("Iv1.%016x", cfg.appID)
	schemas, err := loadCheckSchemas(restSchemaDir(t))
	if err != nil {
		t.Fatalf("ghapptest: %v", err)
	}
	s := &Server{t: t, cfg: cfg, schemas: schemas, gitRoot: t.TempDir()}
	s.st = state{
		nextID:        1000,
		repos:         map[string]*repoState{},
		installations: map[int64]*installation{},
		byOwner:       map[string]int64{},
		tokens:        map[string]*tokenState{},
		manifestCodes: map[string]*pendingManifest{},
	}
	if s.key, err = appKey(); err != nil {
		t.Fatalf("ghapptest: %v", err)
	}
	if s.git, err = newGitEnv(t.TempDir()); err != nil {
		t.Fatalf("ghapptest: %v", err)
	}
	s.gitServe = s.newGitBackend()
	s.mux = s.routes()
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	if cfg.addr != "" {
		l, err := net.Listen("tcp", cfg.addr)
		if err != nil {
			t.Fatalf("ghapptest: %v", err)
		}
		s.srv.Listener.Close()
		s.srv.Listener = l
	}
	s.srv.Start()
	// Close waits for in-flight requests, so no handler reports to t after
	// the test has finished.
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the server's root, where a browser would find github.com.
func (s *Server) URL() string { return s.srv.URL }

// APIURL is the REST base URL, "<URL>/api/v3/", as GitHub Enterprise lays
// it out.
func (s *Server) APIURL() string { return s.srv.URL + "/api/v3/" }

// CloneURL is the HTTPS clone URL of a repository.
func (s *Server) CloneURL(owner, repo string) string {
	return s.srv.URL + "/" + owner + "/" + repo + ".git"
}

// Client is an HTTP client for the server. Requests still need a token.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// nextIDLocked hands out ids from one counter shared by every kind of
// object, so a test that mixes up a repository id and a check-run id gets a
// 404 instead of a lucky match.
func (s *Server) nextIDLocked() int64 {
	s.st.nextID++
	return s.st.nextID
}

// serve logs every request, applies injected faults, then routes.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	rec := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	var body []byte
	if isAPIPath(r.URL.Path) {
		// Keep REST bodies for the log; git bodies are packs and stream.
		var err error
		body, err = io.ReadAll(io.LimitReader(r.Body, maxBody))
		if err != nil {
			writeError(rec, &apiError{status: http.StatusBadRequest, message: "Problems reading body"})
			s.logRequest(r, body, rec.status, at)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	if f := s.takeFault(r); f != nil {
		s.writeFault(rec, f)
	} else {
		s.mux.ServeHTTP(rec, r)
	}
	s.logRequest(r, body, rec.status, at)
}

func isAPIPath(p string) bool { return strings.HasPrefix(p, apiPrefix+"/") }

// statusWriter remembers the status for the request log.
type statusWriter struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wroteHeader = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the real writer (flushes).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
