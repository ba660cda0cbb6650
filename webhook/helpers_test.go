package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

var testSecret = []byte("test-webhook-secret-7c4e")

// sig256 signs body as GitHub does.
func sig256(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// delivery builds a POST as GitHub sends it, signed over body's exact bytes.
func delivery(event, id string, body []byte) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/webhooks/github", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("X-GitHub-Event", event)
	r.Header.Set("X-GitHub-Delivery", id)
	r.Header.Set("X-GitHub-Hook-ID", "31")
	r.Header.Set("X-Hub-Signature-256", sig256(testSecret, body))
	return r
}

// sinkCall is one Accept call the fake sink saw.
type sinkCall struct {
	d           Delivery
	ev          Event
	ctxErr      error
	hasDeadline bool
}

// fakeSink records what it is given and answers with result and err.
type fakeSink struct {
	mu     sync.Mutex
	calls  []sinkCall
	result Accepted
	err    error
}

func (s *fakeSink) Accept(ctx context.Context, d Delivery, ev Event) (Accepted, error) {
	_, ok := ctx.Deadline()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, sinkCall{d: d, ev: ev, ctxErr: ctx.Err(), hasDeadline: ok})
	return s.result, s.err
}

func (s *fakeSink) recorded() []sinkCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sinkCall(nil), s.calls...)
}

func newHandler(t testing.TB, cfg Config, sink Sink) *Handler {
	t.Helper()
	if cfg.Secrets == nil {
		cfg.Secrets = [][]byte{testSecret}
	}
	h, err := New(cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// serve runs r through h and decodes the reply.
func serve(t *testing.T, h http.Handler, r *http.Request) (int, reply) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	var rep reply
	if err := json.Unmarshal(w.Body.Bytes(), &rep); err != nil {
		t.Fatalf("reply %q is not JSON: %v", w.Body.String(), err)
	}
	return w.Code, rep
}

// fixture reads one of this package's hand-written payloads.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sharedPayload reads a real GitHub payload from the shared test data beside
// the checkout (the directory holding go.mod, then ../shared), or skips.
func sharedPayload(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(sharedWebhooks(t), filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sharedWebhooks(t testing.TB) string {
	t.Helper()
	dir, err := findSharedWebhooks()
	if err != nil {
		t.Skipf("real GitHub payloads not available: %v", err)
	}
	return dir
}

// findSharedWebhooks walks up from the package directory to the module root
// (go.mod) and returns ../shared/testdata/github/webhooks beside it.
func findSharedWebhooks() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the package directory")
		}
		dir = parent
	}
	hooks := filepath.Join(dir, "..", "shared", "testdata", "github", "webhooks")
	if _, err := os.Stat(hooks); err != nil {
		return "", fmt.Errorf("../shared/testdata/github/webhooks beside the checkout: %w", err)
	}
	return hooks, nil
}

// edit returns a re-serialised copy of a JSON payload after change. The copy
// is signed over its own new bytes by delivery.
func edit(t testing.TB, body []byte, change func(map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	change(m)
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// obj walks m along keys, each naming a JSON object.
func obj(t testing.TB, m map[string]any, keys ...string) map[string]any {
	t.Helper()
	for _, k := range keys {
		next, ok := m[k].(map[string]any)
		if !ok {
			t.Fatalf("payload has no object %q", k)
		}
		m = next
	}
	return m
}
