package metrics_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/metrics"
)

func newMetrics(t *testing.T, opts metrics.Options) (*metrics.Metrics, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg, opts)
	if err != nil {
		t.Fatal(err)
	}
	return m, reg
}

// exposition gathers reg, one "name label=value ... value" line per series.
func exposition(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	var b strings.Builder
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			b.WriteString(mf.GetName())
			for _, l := range m.GetLabel() {
				b.WriteString(" " + l.GetName() + "=" + l.GetValue())
			}
			switch {
			case m.Counter != nil:
				b.WriteString(" " + ftoa(m.GetCounter().GetValue()))
			case m.Gauge != nil:
				b.WriteString(" " + ftoa(m.GetGauge().GetValue()))
			case m.Histogram != nil:
				b.WriteString(" count=" + ftoa(float64(m.GetHistogram().GetSampleCount())) + " sum=" + ftoa(m.GetHistogram().GetSampleSum()))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func TestListener(t *testing.T) {
	m, reg := newMetrics(t, metrics.Options{})
	ctx := context.Background()
	l := m.Listener()
	for _, ev := range []attractor.AttemptFinished{
		{Node: &attractor.Node{ID: "test", Kind: attractor.KindVerify}, Outcome: attractor.Outcome{Status: attractor.StatusFail}, Duration: time.Second},
		{Node: &attractor.Node{ID: "test", Kind: attractor.KindVerify}, Outcome: attractor.Outcome{Status: attractor.StatusSuccess}, Duration: 2 * time.Second, Final: true},
		{Node: &attractor.Node{ID: "odd", Kind: "my.custom.kind"}, Outcome: attractor.Outcome{Status: "weird"}, Duration: time.Second},
	} {
		if err := l.AttemptFinished(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	for _, res := range []*attractor.RunResult{
		{Status: attractor.StatusSuccess},
		{Status: attractor.StatusFail, FailureClass: attractor.ClassDeterministic},
		{Status: attractor.StatusFail, FailureClass: attractor.ClassCanceled},
		{Status: attractor.StatusFail},
	} {
		if err := l.RunFinished(ctx, res); err != nil {
			t.Fatal(err)
		}
	}
	got := exposition(t, reg)
	for _, want := range []string{
		"kilroy_node_duration_seconds kind=verify status=fail count=1 sum=1",
		"kilroy_node_duration_seconds kind=verify status=success count=1 sum=2",
		"kilroy_node_duration_seconds kind=other status=other count=1 sum=1",
		"kilroy_runs_total conclusion=success 1",
		"kilroy_runs_total conclusion=failure 2",
		"kilroy_runs_total conclusion=cancelled 1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("metrics lack %q:\n%s", want, got)
		}
	}
}

func TestRoundTripper(t *testing.T) {
	m, reg := newMetrics(t, metrics.Options{})
	codes := []int{http.StatusOK, http.StatusBadGateway, http.StatusBadGateway, http.StatusForbidden}
	var next atomic.Int32
	gh := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(codes[next.Add(1)-1])
	}))
	defer gh.Close()
	client := &http.Client{Transport: m.RoundTripper(nil)}
	for range codes {
		resp, err := client.Get(gh.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	gh.Close()
	if _, err := client.Get(gh.URL); err == nil {
		t.Fatal("request to a closed server succeeded")
	}
	got := exposition(t, reg)
	for _, want := range []string{
		metrics.NameGitHubCalls + " status=200 1",
		metrics.NameGitHubCalls + " status=502 2",
		metrics.NameGitHubCalls + " status=403 1",
		metrics.NameGitHubCalls + " status=error 1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("metrics lack %q:\n%s", want, got)
		}
	}
}

func TestDeliveries(t *testing.T) {
	m, reg := newMetrics(t, metrics.Options{})
	answer := func(code int, body string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.WriteHeader(code)
			io.WriteString(w, body)
		})
	}
	tests := []struct {
		event string
		h     http.Handler
	}{
		{"pull_request", answer(http.StatusAccepted, `{"status":"queued"}`)},
		{"pull_request", answer(http.StatusOK, `{"status":"duplicate"}`)},
		{"issue_comment", answer(http.StatusOK, `{"status":"ignored","reason":"not a command"}`)},
		{"ping", answer(http.StatusUnauthorized, `{"status":"error"}`)},
		{"made_up_event", answer(http.StatusBadRequest, `{"status":"error"}`)},
		{"check_run", answer(http.StatusServiceUnavailable, `not json`)},
		{"check_suite", answer(http.StatusRequestEntityTooLarge, ``)},
	}
	for _, tt := range tests {
		req := httptest.NewRequest("POST", "/webhooks/github", strings.NewReader("{}"))
		req.Header.Set("X-GitHub-Event", tt.event)
		m.Deliveries(tt.h).ServeHTTP(httptest.NewRecorder(), req)
	}
	got := exposition(t, reg)
	for _, want := range []string{
		"kilroy_webhook_deliveries_total event=pull_request result=queued 1",
		"kilroy_webhook_deliveries_total event=pull_request result=duplicate 1",
		"kilroy_webhook_deliveries_total event=issue_comment result=ignored 1",
		"kilroy_webhook_deliveries_total event=ping result=unauthorized 1",
		"kilroy_webhook_deliveries_total event=other result=malformed 1",
		"kilroy_webhook_deliveries_total event=check_run result=unavailable 1",
		"kilroy_webhook_deliveries_total event=check_suite result=too_large 1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("metrics lack %q:\n%s", want, got)
		}
	}
}

func TestQueueDepth(t *testing.T) {
	depth, fail := 3, false
	_, reg := newMetrics(t, metrics.Options{QueueDepth: func(ctx context.Context) (int, error) {
		if fail {
			return 0, errors.New("database is locked")
		}
		return depth, nil
	}})
	if got := exposition(t, reg); !strings.Contains(got, "kilroy_queue_depth 3") {
		t.Errorf("metrics lack the queue depth:\n%s", got)
	}
	fail = true
	if _, err := reg.Gather(); err == nil || !strings.Contains(err.Error(), "database is locked") {
		t.Errorf("gather with a failing queue: %v, want the queue's error", err)
	}
}

func TestIntakeDepth(t *testing.T) {
	_, reg := newMetrics(t, metrics.Options{
		QueueDepth:  func(context.Context) (int, error) { return 1, nil },
		IntakeDepth: func(context.Context) (int, error) { return 17, nil },
	})
	got := exposition(t, reg)
	if !strings.Contains(got, "kilroy_intake_depth 17") || !strings.Contains(got, "kilroy_queue_depth 1") {
		t.Errorf("metrics lack the intake depth beside the queue depth:\n%s", got)
	}
}

func TestNewRegistersOnce(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := metrics.New(reg, metrics.Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := metrics.New(reg, metrics.Options{}); err == nil {
		t.Error("second New on one registry: no error")
	}
	if _, err := metrics.New(nil, metrics.Options{}); err == nil {
		t.Error("New(nil): no error")
	}
}

func TestBuildInfo(t *testing.T) {
	tests := []struct {
		name  string
		build metrics.BuildInfo
		want  string
	}{
		{"stamped", metrics.BuildInfo{Version: "v1.2.0", Revision: "0123abcd", GoVersion: "go1.26.0"},
			"kilroy_build_info goversion=go1.26.0 revision=0123abcd version=v1.2.0 1"},
		{"nothing known", metrics.BuildInfo{},
			"kilroy_build_info goversion=unknown revision=unknown version=unknown 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, reg := newMetrics(t, metrics.Options{Build: tt.build})
			var got []string
			for line := range strings.Lines(exposition(t, reg)) {
				if strings.HasPrefix(line, metrics.NameBuildInfo+" ") {
					got = append(got, strings.TrimSuffix(line, "\n"))
				}
			}
			if diff := cmp.Diff(got, []string{tt.want}); diff != "" {
				t.Errorf("build info series (-got +want):\n%s", diff)
			}
		})
	}
}

func TestBodyBytes(t *testing.T) {
	_, reg := newMetrics(t, metrics.Options{})
	var inFlight int64 = 16385
	if err := metrics.RegisterBodyBytes(reg, func() int64 { return inFlight }); err != nil {
		t.Fatal(err)
	}
	if got := exposition(t, reg); !strings.Contains(got, "kilroy_webhook_body_bytes 16385\n") {
		t.Errorf("metrics lack the body bytes in flight:\n%s", got)
	}
	inFlight = 0
	if got := exposition(t, reg); !strings.Contains(got, "kilroy_webhook_body_bytes 0\n") {
		t.Errorf("the body bytes are not read at scrape time:\n%s", got)
	}
}
