package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLogLines: one line per delivery with the named keys, never the body
// or the secret; refusals and an unavailable queue are warnings, other sink
// failures errors.
func TestLogLines(t *testing.T) {
	var out bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))
	sink := &fakeSink{}
	h := newHandler(t, Config{Logger: logger}, sink)
	pr := fixture(t, "pull_request.opened.json")

	h.ServeHTTP(httptest.NewRecorder(), delivery("pull_request", "d-ok", pr))
	bad := delivery("pull_request", "d-bad", pr)
	bad.Header.Set("X-Hub-Signature-256", sig256([]byte("wrong"), pr))
	h.ServeHTTP(httptest.NewRecorder(), bad)
	h.ServeHTTP(httptest.NewRecorder(), delivery("pull_request", "d-json", []byte(`{"body-marker-5b1f": `)))
	sink.err = fmt.Errorf("insert: %w", ErrUnavailable)
	h.ServeHTTP(httptest.NewRecorder(), delivery("pull_request", "d-busy", pr))
	sink.err = errors.New("database disk image is malformed")
	h.ServeHTTP(httptest.NewRecorder(), delivery("pull_request", "d-down", pr))

	accepted := map[string]any{"kind": "pull_request", "action": "opened", "installation": 42.0, "repo": "acme/widgets", "pr": 7.0}
	with := func(m map[string]any) map[string]any {
		for k, v := range accepted {
			m[k] = v
		}
		return m
	}
	want := []map[string]any{
		with(map[string]any{"level": "INFO", "delivery": "d-ok", "status": 202.0}),
		{"level": "WARN", "delivery": "d-bad", "status": 401.0, "error": "X-Hub-Signature-256 does not match the body: check the webhook secret"},
		{"level": "WARN", "delivery": "d-json", "status": 400.0, "error": "malformed JSON payload: unexpected end of JSON input"},
		with(map[string]any{"level": "WARN", "delivery": "d-busy", "status": 503.0,
			"error": "the delivery could not be queued; redeliver it later: accepting pull_request delivery d-busy: insert: webhook: queue unavailable"}),
		with(map[string]any{"level": "ERROR", "delivery": "d-down", "status": 503.0,
			"error": "the delivery could not be queued; redeliver it later: accepting pull_request delivery d-down: database disk image is malformed"}),
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(want) {
		t.Fatalf("got %d log lines, want %d:\n%s", len(lines), len(want), out.String())
	}
	for i, line := range lines {
		for _, leak := range []string{string(testSecret), "body-marker-5b1f", "Add a verify step"} {
			if strings.Contains(line, leak) {
				t.Errorf("log line %d shows %q: %s", i, leak, line)
			}
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatal(err)
		}
		delete(got, "time")
		want[i]["msg"], want[i]["event"] = "webhook delivery", "pull_request"
		if diff := cmp.Diff(got, want[i]); diff != "" {
			t.Errorf("log line %d (-got +want):\n%s", i, diff)
		}
	}
}
