package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/checks"
	"github.com/kilroy-bot/kilroy-bot/metrics"
	"github.com/kilroy-bot/kilroy-bot/runpage"
)

const testRunID = "01J9Z8Q4M6V3N5R7T9W1X3Y5Z7"

// The test server's webhook secrets: the current one, which signs run
// page links, and the one before a rotation, still accepted.
const (
	testSecret    = "value-secret-1234"
	testOldSecret = "old-value-secret-5678"
)

// testKeys are the run page keys of testSecret and testOldSecret.
func testKeys(t *testing.T, secrets ...string) *runpage.Keys {
	t.Helper()
	if secrets == nil {
		secrets = []string{testSecret, testOldSecret}
	}
	var bs [][]byte
	for _, s := range secrets {
		bs = append(bs, []byte(s))
	}
	k, err := runpage.NewKeys(bs...)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newTestLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewJSONHandler(w, nil)) }

// testServer is a server over stub parts: a webhook that answers 202, the
// given readiness checks, and a data dir in a temporary directory.
type testServer struct {
	srv     *server
	metrics *metrics.Metrics
	dataDir string
	keys    *runpage.Keys
}

func newTestServer(t *testing.T, ready ...readyCheck) *testServer {
	t.Helper()
	return newTestServerLogging(t, io.Discard, ready...)
}

// newTestServerLogging is newTestServer logging through serve's own
// logger to logs.
func newTestServerLogging(t *testing.T, logs io.Writer, ready ...readyCheck) *testServer {
	t.Helper()
	dataDir := t.TempDir()
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg, metrics.Options{})
	if err != nil {
		t.Fatal(err)
	}
	red := checks.NewRedactor(testSecret)
	keys := testKeys(t)
	pages, err := runpage.New(runpage.Options{
		RunsDir: filepath.Join(dataDir, "runs"), Keys: keys, Redactor: red,
		CommitURL: func(_, sha string) string { return "https://github.example/o/r/commit/" + sha },
	})
	if err != nil {
		t.Fatal(err)
	}
	hook := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, `{"status":"queued"}`)
	})
	cfg := serveConfig{Listen: "127.0.0.1:0", DataDir: dataDir, WebhookSecret: secret(testSecret)}
	deps := serveDeps{
		Logger: newServeLogger(logs, cfg), Webhook: m.Deliveries(hook), Pages: pages, Gatherer: reg,
		Ready: ready, Shutdown: func(context.Context) error { return nil }, Redactor: red,
	}
	srv, err := buildServer(context.Background(), cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.ln.Close() })
	return &testServer{srv: srv, metrics: m, dataDir: dataDir, keys: keys}
}

// get serves one request without the network.
func (ts *testServer) do(t *testing.T, method, target string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	ts.srv.http.Handler.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	return rec.Code, rec.Body.String()
}

func TestHealthz(t *testing.T) {
	ts := newTestServer(t, readyCheck{Name: "queue", Check: func(context.Context) error { return errors.New("down") }})
	if code, body := ts.do(t, "GET", "/healthz"); code != http.StatusOK {
		t.Errorf("GET /healthz = %d %q, want 200 even when not ready", code, body)
	}
}

func TestReadyz(t *testing.T) {
	t.Run("ready", func(t *testing.T) {
		ts := newTestServer(t, readyCheck{Name: "queue", Check: func(context.Context) error { return nil }})
		if code, body := ts.do(t, "GET", "/readyz"); code != http.StatusOK {
			t.Errorf("GET /readyz = %d %q, want 200", code, body)
		}
	})
	t.Run("queue down", func(t *testing.T) {
		ts := newTestServer(t, readyCheck{Name: "queue", Check: func(context.Context) error {
			return errors.New("database is locked; secret value-secret-1234")
		}})
		code, body := ts.do(t, "GET", "/readyz")
		if code != http.StatusServiceUnavailable || !strings.Contains(body, "queue: database is locked") {
			t.Errorf("GET /readyz = %d %q, want 503 naming the queue", code, body)
		}
		if strings.Contains(body, "value-secret-1234") {
			t.Errorf("GET /readyz leaks the secret: %q", body)
		}
	})
	t.Run("data dir not writable", func(t *testing.T) {
		ts := newTestServer(t)
		if err := os.RemoveAll(ts.dataDir); err != nil {
			t.Fatal(err)
		}
		code, body := ts.do(t, "GET", "/readyz")
		if code != http.StatusServiceUnavailable || !strings.Contains(body, "data dir") {
			t.Errorf("GET /readyz = %d %q, want 503 naming the data dir", code, body)
		}
	})
	t.Run("draining", func(t *testing.T) {
		ts := newTestServer(t)
		ts.srv.draining.Store(true)
		if code, body := ts.do(t, "GET", "/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "shutting down") {
			t.Errorf("GET /readyz = %d %q, want 503 while shutting down", code, body)
		}
	})
}

func TestMetricsEndpoint(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	lis := ts.metrics.Listener()
	lis.AttemptFinished(ctx, attractor.AttemptFinished{
		Node: &attractor.Node{ID: "test", Kind: attractor.KindVerify}, Final: true,
		Outcome: attractor.Outcome{Status: attractor.StatusFail}, Duration: 1500 * time.Millisecond,
	})
	lis.RunFinished(ctx, &attractor.RunResult{Status: attractor.StatusFail})

	gh := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer gh.Close()
	client := &http.Client{Transport: ts.metrics.RoundTripper(http.DefaultTransport)}
	resp, err := client.Get(gh.URL + "/api/v3/app")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	if code, body := ts.do(t, "POST", "/webhooks/github"); code != http.StatusAccepted {
		t.Fatalf("POST /webhooks/github = %d %q", code, body)
	}
	code, body := ts.do(t, "GET", "/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics = %d", code)
	}
	for _, want := range []string{
		`kilroy_node_duration_seconds_count{kind="verify",status="fail"} 1`,
		`kilroy_node_duration_seconds_sum{kind="verify",status="fail"} 1.5`,
		`kilroy_runs_total{conclusion="failure"} 1`,
		`kilroy_github_api_requests_total{status="502"} 1`,
		`kilroy_webhook_deliveries_total{event="other",result="queued"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(body, "go_goroutines") {
		t.Errorf("/metrics serves collectors this test did not register: the default registry leaked in")
	}
}

// writeTestRun writes a small run directory: a checkpoint, progress, a
// report and a node whose log prints a token.
func writeTestRun(t *testing.T, runsDir, id string) {
	t.Helper()
	dir := filepath.Join(runsDir, id)
	files := map[string]string{
		"checkpoint.json": `{"version":1,"run_id":"` + id + `","pipeline":"ci","branch":"kilroy/run/ci/` + id + `",` +
			`"commit_sha":"abcdef1234567890abcdef1234567890abcdef12","state":{"run_id":"` + id + `",` +
			`"completed_nodes":["build"],"node_outcomes":{"build":{"status":"fail","failure_reason":"exit status 2"}}}}`,
		"progress.ndjson": `{"time":"2025-01-02T03:04:05Z","type":"node_started","run_id":"` + id + `","node":"build"}` + "\n" +
			`{"time":"2025-01-02T03:04:07Z","type":"node_finished","run_id":"` + id + `","node":"build","attempt":1,"status":"fail","reason":"exit status 2","duration_ms":2000}` + "\n" +
			`{"time":"2025-01-02T03:04:08Z","type":"checkpoint","run_id":"` + id + `","node":"build","status":"fail","sha":"abcdef1234567890abcdef1234567890abcdef12"}` + "\n",
		"report.md":              "# ci failed\n<script>alert(1)</script>\n",
		"nodes/build/stdout.log": "building\nGITHUB_TOKEN=ghs_0123456789abcdefghijABCDEFGHIJ0123\n",
		"nodes/build/stderr.log": "webhook secret value-secret-1234\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRunsPage(t *testing.T) {
	ts := newTestServer(t)
	writeTestRun(t, filepath.Join(ts.dataDir, "runs"), testRunID)

	code, body := ts.do(t, "GET", ts.keys.Path(testRunID))
	if code != http.StatusOK {
		t.Fatalf("GET /runs/%s with its token = %d %q", testRunID, code, body)
	}
	for _, want := range []string{
		"<code>build</code>", "exit status 2", checks.Redacted, "&lt;script&gt;",
		`href="https://github.example/o/r/commit/abcdef1234567890abcdef1234567890abcdef12"`, "2s",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("run page lacks %q", want)
		}
	}
	for _, leak := range []string{"ghs_0123456789", testSecret, "<script>"} {
		if strings.Contains(body, leak) {
			t.Errorf("run page shows %q", leak)
		}
	}

	// With the token of the id asked for: the id is still checked.
	tests := []struct {
		id   string
		want int
	}{
		{"01J9Z8Q4M6V3N5R7T9W1X3Y5Z8", http.StatusNotFound}, // valid id, no such run
		{"../etc", http.StatusBadRequest},
		{"../../../etc/passwd", http.StatusBadRequest},
		{strings.ToLower(testRunID), http.StatusBadRequest},
		{"01J9Z8Q4M6V3N5R7T9W1X3Y5Z", http.StatusBadRequest}, // 25 characters
	}
	for _, tt := range tests {
		target := ts.keys.Path(tt.id)
		if code, body := ts.do(t, "GET", target); code != tt.want {
			t.Errorf("GET %s = %d %q, want %d", target, code, body, tt.want)
		}
	}
	// An unescaped ../ never reaches the page: the mux cleans the path.
	if code, _ := ts.do(t, "GET", "/runs/../etc?t="+ts.keys.Token("../etc")); code == http.StatusOK {
		t.Errorf("GET /runs/../etc = 200")
	}
}

// TestRunsPageToken: the page opens with its token, made with the current
// webhook secret or the one before; without it, with a wrong one or with
// another run's, every request gets the same 404 as a page that does not
// exist, whether the run exists or not and whether its id is valid or not.
func TestRunsPageToken(t *testing.T) {
	ts := newTestServer(t)
	writeTestRun(t, filepath.Join(ts.dataDir, "runs"), testRunID)
	const otherRun = "01J9Z8Q4M6V3N5R7T9W1X3Y5Z8" // exists too
	writeTestRun(t, filepath.Join(ts.dataDir, "runs"), otherRun)
	page := "/runs/" + testRunID

	for name, keys := range map[string]*runpage.Keys{
		"current secret":    testKeys(t, testSecret),
		"old secret":        testKeys(t, testOldSecret),
		"server's own keys": ts.keys,
	} {
		code, body := ts.do(t, "GET", keys.Path(testRunID))
		if code != http.StatusOK || !strings.Contains(body, "<code>build</code>") {
			t.Errorf("%s: GET %s = %d, want 200 with the page:\n%.300s", name, keys.Path(testRunID), code, body)
		}
	}
	if ts.keys.Token(testRunID) != testKeys(t, testSecret).Token(testRunID) {
		t.Errorf("links are not signed with the current (first) secret")
	}

	_, want := ts.do(t, "GET", "/no-such-endpoint")
	if want == "" {
		t.Fatal("the mux's 404 has no body to compare with")
	}
	good := ts.keys.Token(testRunID)
	flipped := []byte(good)
	flipped[0] ^= 1
	// Without a token, the same hint for every id, existing or not.
	tests := []struct{ name, target, want string }{
		{"no token", page, noRunTokenBody + "\n"},
		{"empty token", page + "?t=", noRunTokenBody + "\n"},
		{"token in another parameter", page + "?token=" + good, noRunTokenBody + "\n"},
		{"no such run", "/runs/01J9Z8Q4M6V3N5R7T9W1X3Y5Z9", noRunTokenBody + "\n"},
		{"invalid id", "/runs/..%2Fetc", noRunTokenBody + "\n"},
		{"invalid id, lower case", "/runs/" + strings.ToLower(testRunID), noRunTokenBody + "\n"},
		{"wrong token", page + "?t=AAAAAAAAAAAAAAAAAAAAAA", want},
		{"one bit off", page + "?t=" + string(flipped), want},
		{"another run's token", page + "?t=" + ts.keys.Token(otherRun), want},
		{"another server's token", testKeys(t, "someone-elses-secret").Path(testRunID), want},
		{"no such run, a token", "/runs/01J9Z8Q4M6V3N5R7T9W1X3Y5Z9?t=" + good, want},
	}
	for _, tt := range tests {
		code, body := ts.do(t, "GET", tt.target)
		if code != http.StatusNotFound || body != tt.want {
			t.Errorf("%s: GET %s = %d %q, want 404 %q", tt.name, tt.target, code, body, tt.want)
		}
	}
	if !strings.Contains(noRunTokenBody, "Details link") {
		t.Errorf("the tokenless 404 gives no hint: %q", noRunTokenBody)
	}
}

// TestRunsPageLogsNoToken: the serve log of run page requests, answered
// or refused, never carries a token, though it names the path refused.
func TestRunsPageLogsNoToken(t *testing.T) {
	var logs syncBuffer
	ts := newTestServerLogging(t, &logs)
	writeTestRun(t, filepath.Join(ts.dataDir, "runs"), testRunID)
	go ts.srv.http.Serve(ts.srv.ln)
	t.Cleanup(func() { ts.srv.http.Close() })
	base := "http://" + ts.srv.Addr().String()

	other := testKeys(t, "someone-elses-secret")
	targets := map[string]int{
		ts.keys.Path(testRunID):                           http.StatusOK,
		other.Path(testRunID):                             http.StatusNotFound,
		ts.keys.Path("01J9Z8Q4M6V3N5R7T9W1X3Y5Z9"):        http.StatusNotFound,
		ts.keys.Path(strings.ToLower(testRunID)):          http.StatusBadRequest,
		"/runs/" + testRunID + "?t=" + ts.keys.Token("x"): http.StatusNotFound,
	}
	for target, want := range targets {
		resp, err := http.Get(base + target)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s = %d, want %d", target, resp.StatusCode, want)
		}
	}
	got := logs.String()
	if n := strings.Count(got, `"msg":"serve: request failed"`); n != len(targets)-1 {
		t.Errorf("%d failed requests logged, want %d:\n%s", n, len(targets)-1, got)
	}
	if !strings.Contains(got, `"path":"/runs/`+testRunID+`"`) {
		t.Errorf("the log does not name the path refused:\n%s", got)
	}
	for _, tok := range []string{
		ts.keys.Token(testRunID), other.Token(testRunID), ts.keys.Token("01J9Z8Q4M6V3N5R7T9W1X3Y5Z9"),
		ts.keys.Token(strings.ToLower(testRunID)), ts.keys.Token("x"),
	} {
		if strings.Contains(got, tok) {
			t.Errorf("the log carries the token %s:\n%s", tok, got)
		}
	}
	if strings.Contains(got, "?t=") {
		t.Errorf("the log carries a query:\n%s", got)
	}
}

// TestServeConnectionCap: with every connection slot held by a client
// that sent half a request, one more connection is not served; it is as
// soon as one of them closes.
func TestServeConnectionCap(t *testing.T) {
	ts := newTestServer(t)
	const limit = 8
	ts.srv.ln = limitConns(ts.srv.ln.(*limitListener).Listener, limit)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ts.srv.run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	addr := ts.srv.Addr().String()
	var held []net.Conn
	for range limit {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		// Headers of a delivery whose body never comes.
		fmt.Fprintf(c, "POST /webhooks/github HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{")
		held = append(held, c)
	}
	t.Cleanup(func() {
		for _, c := range held {
			c.Close()
		}
	})
	healthz := func() (string, error) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return "", err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(time.Second))
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		b, err := io.ReadAll(c)
		return string(b), err
	}
	if got, err := healthz(); err == nil || strings.Contains(got, "200 OK") {
		t.Fatalf("a connection over the cap was served: %q %v", got, err)
	}
	held[0].Close()
	if got, err := healthz(); err != nil || !strings.Contains(got, "200 OK") {
		t.Fatalf("a connection after one closed: %q %v, want 200 OK", got, err)
	}
}
