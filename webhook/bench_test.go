package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkHandler sends signed pull_request deliveries through the handler
// with a sink that does nothing, beside a baseline that only reads the
// capped body, verifies the HMAC and answers 202.
func BenchmarkHandler(b *testing.B) {
	body := benchPayload(b)
	header := http.Header{
		"Content-Type":        {"application/json"},
		"X-Github-Event":      {"pull_request"},
		"X-Github-Delivery":   {"72d3162e-cc78-11e3-81ab-4c9367dc0958"},
		"X-Hub-Signature-256": {sig256(testSecret, body)},
	}
	handlers := []struct {
		name string
		h    http.Handler
	}{
		{"baseline", baselineHandler(testSecret)},
		{"kilroy", newHandler(b, Config{}, nopSink{})},
	}
	for _, bc := range handlers {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					w := &benchWriter{header: http.Header{}}
					r := &http.Request{
						Method: http.MethodPost, Header: header, ContentLength: int64(len(body)),
						Body: io.NopCloser(bytes.NewReader(body)),
					}
					bc.h.ServeHTTP(w, r)
					if w.code != http.StatusAccepted {
						b.Errorf("status %d, want 202", w.code)
						return
					}
				}
			})
		})
	}
}

// benchPayload is the real pull_request/opened payload when the shared test
// data is present, else this package's fixture.
func benchPayload(b *testing.B) []byte {
	if dir, err := findSharedWebhooks(); err == nil {
		body, err := os.ReadFile(filepath.Join(dir, "pull_request", "opened.payload.json"))
		if err != nil {
			b.Fatal(err)
		}
		return body
	}
	b.Log("shared payloads absent: benchmarking the small fixture")
	return fixture(b, "pull_request.opened.json")
}

// baselineHandler is the least a webhook must do: cap, read, verify, 202.
func baselineHandler(secret []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, DefaultMaxBody))
		if err != nil {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		}
		got, err := hex.DecodeString(strings.TrimPrefix(r.Header.Get("X-Hub-Signature-256"), "sha256="))
		if err != nil || !hmac.Equal(got, sign(secret, body)) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
}

type nopSink struct{}

func (nopSink) Accept(context.Context, Delivery, Event) (Accepted, error) {
	return Accepted{}, nil
}

// benchWriter is a ResponseWriter that keeps only the status.
type benchWriter struct {
	header http.Header
	code   int
}

func (w *benchWriter) Header() http.Header         { return w.header }
func (w *benchWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *benchWriter) WriteHeader(code int)        { w.code = code }

// BenchmarkDecode isolates the JSON decoding of a pull_request payload, the
// bulk of the handler's cost beyond the baseline.
func BenchmarkDecode(b *testing.B) {
	body := benchPayload(b)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := decodePullRequest(body); err != nil {
			b.Fatal(err)
		}
	}
}
