package ghapp

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
)

// fakeClock is the App's clock and sleeper in tests: Sleep records the
// wait and moves the clock on instead of spending real time.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	return nil
}

func (c *fakeClock) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// syncBuffer collects log output from concurrent requests.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// fixture is a fake GitHub with acme/widgets (one commit on main) and an
// App pointed at it.
type fixture struct {
	srv   *ghapptest.Server
	repo  *ghapptest.Repo
	app   *App
	clock *fakeClock
	logs  *syncBuffer
	sha   string // main's commit
	inst  int64
	r     Repo
}

// newFixture builds the fixture; wrap, when given, wraps the HTTP
// transport (to observe or tamper with traffic).
func newFixture(t *testing.T, wrap func(http.RoundTripper) http.RoundTripper) *fixture {
	t.Helper()
	srv := ghapptest.New(t)
	repo := srv.AddRepo("acme", "widgets")
	sha := repo.Commit(t, "main", map[string]string{
		"README.md":          "hello\n",
		".kilroy/ci.dot":     "digraph ci { start [shape=Mdiamond] }\n",
		".kilroy/config.yml": "version: 1\n",
	}, "initial")
	f := &fixture{srv: srv, repo: repo, sha: sha, inst: srv.InstallationID("acme"),
		r:     Repo{Owner: "acme", Name: "widgets"},
		clock: &fakeClock{now: time.Now()}, logs: &syncBuffer{}}
	hc := srv.Client()
	if wrap != nil {
		hc = &http.Client{Transport: wrap(hc.Transport)}
	}
	app, err := NewApp(Options{
		AppID: srv.AppID(), PrivateKeyPEM: srv.PrivateKeyPEM(), BaseURL: srv.APIURL(), HTTPClient: hc,
		Logger: slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Sleep:  f.clock.Sleep, Now: f.clock.Now,
	})
	if err != nil {
		t.Fatalf("NewApp: %v", err)
	}
	f.app = app
	return f
}

func (f *fixture) client(t *testing.T) *Client {
	t.Helper()
	return f.app.Installation(t.Context(), f.inst)
}

// requests are the fake's answered requests whose path ends with suffix
// (and has method, unless method is "").
func (f *fixture) requests(method, suffix string) []ghapptest.Request {
	var out []ghapptest.Request
	for _, r := range f.srv.Requests() {
		if (method == "" || r.Method == method) && strings.HasSuffix(r.Path, suffix) {
			out = append(out, r)
		}
	}
	return out
}

func statuses(rs []ghapptest.Request) []int {
	out := make([]int, len(rs))
	for i, r := range rs {
		out[i] = r.Status
	}
	return out
}

func sprintf(format string, a ...any) string { return fmt.Sprintf(format, a...) }
