package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
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

func newTestLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewJSONHandler(w, nil)) }

// testServer is a server over stub parts: a webhook that answers 202, the
// given readiness checks, and a data dir in a temporary directory.
type testServer struct {
	srv     *server
	metrics *metrics.Metrics
	dataDir string
}

func newTestServer(t *testing.T, ready ...readyCheck) *testServer {
	t.Helper()
	dataDir := t.TempDir()
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg, metrics.Options{})
	if err != nil {
		t.Fatal(err)
	}
	red := checks.NewRedactor("value-secret-1234")
	pages, err := runpage.New(runpage.Options{
		RunsDir: filepath.Join(dataDir, "runs"), Redactor: red,
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
	deps := serveDeps{
		Logger: newTestLogger(io.Discard), Webhook: m.Deliveries(hook), Pages: pages, Gatherer: reg,
		Ready: ready, Shutdown: func(context.Context) error { return nil }, Redactor: red,
	}
	srv, err := buildServer(context.Background(), serveConfig{Listen: "127.0.0.1:0", DataDir: dataDir}, deps)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.ln.Close() })
	return &testServer{srv: srv, metrics: m, dataDir: dataDir}
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

	code, body := ts.do(t, "GET", "/runs/"+testRunID)
	if code != http.StatusOK {
		t.Fatalf("GET /runs/%s = %d %q", testRunID, code, body)
	}
	for _, want := range []string{
		"<code>build</code>", "exit status 2", checks.Redacted, "&lt;script&gt;",
		`href="https://github.example/o/r/commit/abcdef1234567890abcdef1234567890abcdef12"`, "2s",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("run page lacks %q", want)
		}
	}
	for _, leak := range []string{"ghs_0123456789", "value-secret-1234", "<script>"} {
		if strings.Contains(body, leak) {
			t.Errorf("run page shows %q", leak)
		}
	}

	tests := []struct {
		target string
		want   int
	}{
		{"/runs/01J9Z8Q4M6V3N5R7T9W1X3Y5Z8", http.StatusNotFound}, // valid id, no such run
		{"/runs/..%2Fetc", http.StatusBadRequest},
		{"/runs/..%2F..%2F..%2Fetc%2Fpasswd", http.StatusBadRequest},
		{"/runs/" + strings.ToLower(testRunID), http.StatusBadRequest},
		{"/runs/01J9Z8Q4M6V3N5R7T9W1X3Y5Z", http.StatusBadRequest}, // 25 characters
	}
	for _, tt := range tests {
		if code, body := ts.do(t, "GET", tt.target); code != tt.want {
			t.Errorf("GET %s = %d %q, want %d", tt.target, code, body, tt.want)
		}
	}
	// An unescaped ../ never reaches the page: the mux cleans the path.
	if code, _ := ts.do(t, "GET", "/runs/../etc"); code == http.StatusOK {
		t.Errorf("GET /runs/../etc = 200")
	}
}
