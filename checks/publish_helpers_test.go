package checks

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/ghapp"
	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
)

// fakeClock is the Publisher's clock, sleeper and timer in tests: time
// moves only when the test (or a Sleep) moves it, and timers fire when
// it passes their deadline.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
	timers []fakeTimer
	armed  int // timers armed so far
}

type fakeTimer struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock on and fires the timers that are due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.fireLocked()
}

func (c *fakeClock) fireLocked() {
	kept := c.timers[:0]
	for _, t := range c.timers {
		if t.at.After(c.now) {
			kept = append(kept, t)
			continue
		}
		t.ch <- c.now
	}
	c.timers = kept
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	c.timers = append(c.timers, fakeTimer{at: c.now.Add(d), ch: ch})
	c.armed++
	c.fireLocked()
	return ch
}

// Sleep records the wait and moves the clock on instead of waiting.
func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	c.fireLocked()
	return nil
}

func (c *fakeClock) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.sleeps)
}

func (c *fakeClock) Armed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.armed
}

// publicURL is where the tests' bot serves its pages.
const publicURL = "https://kilroy.example"

// ghEnv is a fake GitHub with acme/widgets (one commit) and a real
// ghapp.Client for its installation.
type ghEnv struct {
	t      *testing.T
	fake   *ghapptest.Server
	sha    string
	client *ghapp.Client
	app    *ghapp.App
	repo   ghapp.Repo
	clock  *fakeClock
	logs   *syncBuffer
}

// newGHEnv builds the environment. The App tries each request twice and
// never really sleeps; rate limits longer than a second are returned to
// the caller, as long ones are in production.
func newGHEnv(t *testing.T) *ghEnv {
	t.Helper()
	fake := ghapptest.New(t)
	r := fake.AddRepo("acme", "widgets")
	sha := r.Commit(t, "main", map[string]string{"main.go": "package main\n", "pkg/a.go": "package pkg\n"}, "initial")
	app, err := ghapp.NewApp(ghapp.Options{
		AppID: fake.AppID(), PrivateKeyPEM: fake.PrivateKeyPEM(), BaseURL: fake.APIURL(), HTTPClient: fake.Client(),
		MaxAttempts: 2, MaxWait: time.Second,
		Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() },
	})
	if err != nil {
		t.Fatalf("NewApp: %v", err)
	}
	return &ghEnv{
		t: t, fake: fake, sha: sha, repo: ghapp.Repo{Owner: "acme", Name: "widgets"}, app: app,
		client: app.Installation(t.Context(), fake.InstallationID("acme")),
		clock:  newFakeClock(), logs: &syncBuffer{},
	}
}

// options are the Publisher options of the tests: the fake clock, the
// public URL, links to the fake's commits, a log to inspect.
func (e *ghEnv) options() PublishOptions {
	return PublishOptions{
		PublicURL: publicURL + "/",
		Render: RenderOptions{
			CommitURL: func(s string) string { return e.fake.URL() + "/acme/widgets/commit/" + s },
			Redactor:  NewRedactor(),
		},
		Now: e.clock.Now, Sleep: e.clock.Sleep, After: e.clock.After,
		Logger: slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
}

// publisher is a Publisher of run r1 of src on the env's commit over api
// (the real client when nil), closed when the test ends.
func (e *ghEnv) publisher(p *attractor.Pipeline, api API, opts PublishOptions) *Publisher {
	if api == nil {
		api = e.client
	}
	pub := NewPublisher(api, e.repo, p, RunInfo{RunID: "r1", HeadSHA: e.sha}, opts)
	e.t.Cleanup(func() { _ = pub.Close(context.Background()) })
	return pub
}

func (e *ghEnv) runs() []*ghapptest.CheckRun { return e.fake.CheckRuns("acme", "widgets") }

// run is the newest check run named name; it fails the test without one.
func (e *ghEnv) run(name string) *ghapptest.CheckRun {
	e.t.Helper()
	runs := e.runs()
	for _, r := range slices.Backward(runs) {
		if r.Name == name {
			return r
		}
	}
	e.t.Fatalf("no check run %q among %d", name, len(runs))
	return nil
}

// waitFor polls cond until it holds, failing the test after a deadline:
// the worker sends in the background.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// requestAnnotations counts the annotations each request of r carried.
func requestAnnotations(t *testing.T, r *ghapptest.CheckRun) []int {
	t.Helper()
	var out []int
	for _, req := range r.Requests {
		var b struct {
			Output *struct {
				Annotations []json.RawMessage `json:"annotations"`
			} `json:"output"`
		}
		if err := json.Unmarshal([]byte(req.Body), &b); err != nil {
			t.Fatalf("request body: %v", err)
		}
		if b.Output != nil && len(b.Output.Annotations) > 0 {
			out = append(out, len(b.Output.Annotations))
		}
	}
	return out
}

// requestField decodes one top-level field of every request of r.
func requestStatuses(t *testing.T, r *ghapptest.CheckRun) []string {
	t.Helper()
	var out []string
	for _, req := range r.Requests {
		var b struct {
			Status     string `json:"status"`
			Conclusion string `json:"conclusion"`
		}
		if err := json.Unmarshal([]byte(req.Body), &b); err != nil {
			t.Fatalf("request body: %v", err)
		}
		out = append(out, req.Method+" "+strings.TrimSpace(b.Status+" "+b.Conclusion))
	}
	return out
}

// driver sends a listener the events an engine would.
type driver struct {
	t *testing.T
	p *attractor.Pipeline
	l attractor.Listener
}

func (d *driver) node(id string) *attractor.Node {
	d.t.Helper()
	n := d.p.Node(id)
	if n == nil {
		d.t.Fatalf("no node %q", id)
	}
	return n
}

func (d *driver) start(id string) *driver {
	d.t.Helper()
	mustOK(d.t, d.l.NodeStarted(d.t.Context(), attractor.NodeStarted{RunID: "r1", Node: d.node(id), Visit: 1, Dir: "stages/" + id}))
	return d
}

func (d *driver) attempt(id string, final bool, o attractor.Outcome) *driver {
	d.t.Helper()
	mustOK(d.t, d.l.AttemptFinished(d.t.Context(), attractor.AttemptFinished{RunID: "r1", Node: d.node(id), Attempt: 1, Final: final, Outcome: o, Duration: 1500 * time.Millisecond, Dir: "stages/" + id}))
	return d
}

func (d *driver) checkpoint(id, sha string) *driver {
	d.t.Helper()
	mustOK(d.t, d.l.Checkpointed(d.t.Context(), attractor.Checkpointed{RunID: "r1", Node: id, SHA: sha}))
	return d
}

func (d *driver) edge(from, to string) *driver {
	d.t.Helper()
	for _, e := range d.p.Outgoing(from) {
		if e.To == to {
			mustOK(d.t, d.l.EdgeSelected(d.t.Context(), attractor.EdgeSelected{RunID: "r1", From: from, To: to, Method: attractor.ByCondition, Edge: e}))
			return d
		}
	}
	d.t.Fatalf("no edge %s -> %s", from, to)
	return d
}

// pass runs id successfully, checkpoints it and moves to next.
func (d *driver) pass(id, next string) *driver {
	d.t.Helper()
	d.start(id).attempt(id, true, attractor.Outcome{Status: attractor.StatusSuccess}).checkpoint(id, sha(byte(len(id))))
	if next != "" {
		d.edge(id, next)
	}
	return d
}

func (d *driver) finish(res *attractor.RunResult) {
	d.t.Helper()
	mustOK(d.t, d.l.RunFinished(d.t.Context(), res))
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// syncBuffer collects log output written from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// recordingAPI passes calls on to GitHub, noting the fake time of every
// update, and fails the calls fail picks (nil: none).
type recordingAPI struct {
	API
	clock *fakeClock
	fail  func(n int, id int64, u ghapp.CheckRunUpdate) error // n counts updates from 1

	mu      sync.Mutex
	updates []timedUpdate
}

type timedUpdate struct {
	id  int64
	at  time.Time
	u   ghapp.CheckRunUpdate
	err error
}

func (a *recordingAPI) UpdateCheckRun(ctx context.Context, repo ghapp.Repo, id int64, u ghapp.CheckRunUpdate) error {
	a.mu.Lock()
	n := len(a.updates) + 1
	a.mu.Unlock()
	var err error
	if a.fail != nil {
		err = a.fail(n, id, u)
	}
	if err == nil {
		err = a.API.UpdateCheckRun(ctx, repo, id, u)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.updates = append(a.updates, timedUpdate{id: id, at: a.clock.Now(), u: u, err: err})
	return err
}

func (a *recordingAPI) Updates() []timedUpdate {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.updates)
}
