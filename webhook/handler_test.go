package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHandlerAnswers(t *testing.T) {
	pr := fixture(t, "pull_request.opened.json")
	closed := edit(t, pr, func(m map[string]any) { m["action"] = "closed" })
	labeled := edit(t, pr, func(m map[string]any) { m["action"] = "labeled" })
	tests := []struct {
		name     string
		req      func() *http.Request
		result   Accepted
		sinkErr  error
		wantCode int
		want     reply
		// wantErr is a substring of the error shown to the sender.
		wantErr   string
		wantCalls int
	}{
		{
			name:      "signed pull request is queued",
			req:       func() *http.Request { return delivery("pull_request", "d-1", pr) },
			result:    Accepted{Job: "run-1"},
			wantCode:  http.StatusAccepted,
			want:      reply{Delivery: "d-1", Status: "queued", Kind: KindPullRequest, Job: "run-1"},
			wantCalls: 1,
		},
		{
			name: "wrong signature",
			req: func() *http.Request {
				r := delivery("pull_request", "d-1", pr)
				r.Header.Set("X-Hub-Signature-256", sig256([]byte("not the secret"), pr))
				return r
			},
			wantCode: http.StatusUnauthorized,
			wantErr:  "does not match",
		},
		{
			name: "body changed after signing",
			req: func() *http.Request {
				r := delivery("pull_request", "d-1", pr)
				r.Body = io.NopCloser(bytes.NewReader(append(pr, ' ')))
				r.ContentLength++
				return r
			},
			wantCode: http.StatusUnauthorized,
			wantErr:  "does not match",
		},
		{
			name: "missing signature",
			req: func() *http.Request {
				r := delivery("pull_request", "d-1", pr)
				r.Header.Del("X-Hub-Signature-256")
				return r
			},
			wantCode: http.StatusUnauthorized,
			wantErr:  "missing X-Hub-Signature-256",
		},
		{
			name: "SHA-1 signature only",
			req: func() *http.Request {
				r := delivery("pull_request", "d-1", pr)
				r.Header.Del("X-Hub-Signature-256")
				r.Header.Set("X-Hub-Signature", "sha1=0123456789abcdef0123456789abcdef01234567")
				return r
			},
			wantCode: http.StatusUnauthorized,
			wantErr:  "X-Hub-Signature-256 is required",
		},
		{
			name: "missing event header",
			req: func() *http.Request {
				r := delivery("pull_request", "d-1", pr)
				r.Header.Del("X-GitHub-Event")
				return r
			},
			wantCode: http.StatusBadRequest,
			wantErr:  "missing X-GitHub-Event",
		},
		{
			name:     "missing delivery header",
			req:      func() *http.Request { return delivery("pull_request", "", pr) },
			wantCode: http.StatusBadRequest,
			wantErr:  "missing X-GitHub-Delivery",
		},
		{
			name:     "malformed JSON",
			req:      func() *http.Request { return delivery("pull_request", "d-1", []byte(`{"action": "opened", `)) },
			wantCode: http.StatusBadRequest,
			wantErr:  "malformed JSON payload",
		},
		{
			name: "JSON of the wrong shape",
			req: func() *http.Request {
				return delivery("pull_request", "d-1", []byte(`{"action": "opened", "pull_request": {"number": "seven"}}`))
			},
			wantCode: http.StatusBadRequest,
			wantErr:  "malformed JSON payload",
		},
		{
			name:     "pull request event without a pull request",
			req:      func() *http.Request { return delivery("pull_request", "d-1", []byte(`{"action": "opened"}`)) },
			wantCode: http.StatusBadRequest,
			wantErr:  "pull_request payload has no pull_request",
		},
		{
			name:     "unknown event",
			req:      func() *http.Request { return delivery("deployment_status", "d-1", []byte(`{}`)) },
			wantCode: http.StatusOK,
			want:     reply{Delivery: "d-1", Status: "ignored", Reason: `event "deployment_status" is not handled`},
		},
		{
			// Closing cancels the pull request's runs.
			name:      "pull request closed is queued as a cancel",
			req:       func() *http.Request { return delivery("pull_request", "d-1", closed) },
			result:    Accepted{Job: "event-1"},
			wantCode:  http.StatusAccepted,
			want:      reply{Delivery: "d-1", Status: "queued", Kind: KindCancel, Job: "event-1"},
			wantCalls: 1,
		},
		{
			name:     "pull request labeled",
			req:      func() *http.Request { return delivery("pull_request", "d-1", labeled) },
			wantCode: http.StatusOK,
			want:     reply{Delivery: "d-1", Status: "ignored", Reason: `pull_request action "labeled" is not handled`},
		},
		{
			name: "unsupported content type",
			req: func() *http.Request {
				r := delivery("pull_request", "d-1", pr)
				r.Header.Set("Content-Type", "text/plain")
				return r
			},
			wantCode: http.StatusUnsupportedMediaType,
			wantErr:  `Content-Type "text/plain" is not supported`,
		},
		{
			name: "form-encoded delivery",
			req: func() *http.Request {
				r := delivery("pull_request", "d-1", []byte(url.Values{"payload": {string(pr)}}.Encode()))
				r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				return r
			},
			wantCode:  http.StatusAccepted,
			want:      reply{Delivery: "d-1", Status: "queued", Kind: KindPullRequest},
			wantCalls: 1,
		},
		{
			name: "form-encoded delivery without payload",
			req: func() *http.Request {
				r := delivery("pull_request", "d-1", []byte("other=1"))
				r.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
				return r
			},
			wantCode: http.StatusBadRequest,
			wantErr:  "no payload field",
		},
		{
			name:      "redelivery",
			req:       func() *http.Request { return delivery("pull_request", "d-1", pr) },
			result:    Accepted{Duplicate: true},
			wantCode:  http.StatusOK,
			want:      reply{Delivery: "d-1", Status: "duplicate", Kind: KindPullRequest, Reason: "duplicate delivery"},
			wantCalls: 1,
		},
		{
			name:      "queue unavailable",
			req:       func() *http.Request { return delivery("pull_request", "d-1", pr) },
			sinkErr:   fmt.Errorf("insert job: %w", ErrUnavailable),
			wantCode:  http.StatusServiceUnavailable,
			wantErr:   "redeliver it later",
			wantCalls: 1,
		},
		{
			name:      "any sink failure",
			req:       func() *http.Request { return delivery("pull_request", "d-1", pr) },
			sinkErr:   errors.New("disk I/O error at /var/lib/x"),
			wantCode:  http.StatusServiceUnavailable,
			wantErr:   "redeliver it later",
			wantCalls: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := &fakeSink{result: tt.result, err: tt.sinkErr}
			h := newHandler(t, Config{}, sink)
			code, got := serve(t, h, tt.req())
			if code != tt.wantCode {
				t.Errorf("status = %d, want %d (reply %+v)", code, tt.wantCode, got)
			}
			if tt.wantErr != "" {
				if got.Status != "error" || !strings.Contains(got.Error, tt.wantErr) {
					t.Errorf("reply %+v, want status error with %q", got, tt.wantErr)
				}
				if strings.Contains(got.Error, "/var/lib") {
					t.Errorf("reply %+v shows an internal error to the sender", got)
				}
			} else if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("reply (-got +want):\n%s", diff)
			}
			if n := len(sink.recorded()); n != tt.wantCalls {
				t.Errorf("sink called %d times, want %d", n, tt.wantCalls)
			}
		})
	}
}

// TestHandlerSecretRotation accepts deliveries signed with any configured
// secret.
func TestHandlerSecretRotation(t *testing.T) {
	body := fixture(t, "ping.json")
	oldSecret, newSecret := []byte("old-secret"), []byte("new-secret")
	h := newHandler(t, Config{Secrets: [][]byte{newSecret, oldSecret}}, &fakeSink{})
	for _, tt := range []struct {
		secret []byte
		want   int
	}{{oldSecret, http.StatusAccepted}, {newSecret, http.StatusAccepted}, {testSecret, http.StatusUnauthorized}} {
		r := delivery("ping", "d-1", body)
		r.Header.Set("X-Hub-Signature-256", sig256(tt.secret, body))
		if code, rep := serve(t, h, r); code != tt.want {
			t.Errorf("signed with %q: status %d (%+v), want %d", tt.secret, code, rep, tt.want)
		}
	}
}

// TestHandlerDetachesSinkContext: the sink's transaction must not be
// cancelled because the sender hung up, yet it has a deadline.
func TestHandlerDetachesSinkContext(t *testing.T) {
	sink := &fakeSink{}
	h := newHandler(t, Config{}, sink)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := delivery("pull_request", "d-1", fixture(t, "pull_request.opened.json")).WithContext(ctx)
	if code, rep := serve(t, h, r); code != http.StatusAccepted {
		t.Fatalf("status %d (%+v), want 202", code, rep)
	}
	calls := sink.recorded()
	if len(calls) != 1 {
		t.Fatalf("sink called %d times, want 1", len(calls))
	}
	if calls[0].ctxErr != nil || !calls[0].hasDeadline {
		t.Errorf("sink context: err %v, deadline %v; want live and with a deadline", calls[0].ctxErr, calls[0].hasDeadline)
	}
	want := Delivery{ID: "d-1", Event: "pull_request", HookID: "31"}
	if diff := cmp.Diff(calls[0].d, want); diff != "" {
		t.Errorf("delivery (-got +want):\n%s", diff)
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	for name, cfg := range map[string]Config{
		"no secret":    {},
		"empty secret": {Secrets: [][]byte{testSecret, {}}},
		"negative cap": {Secrets: [][]byte{testSecret}, MaxBody: -1},
	} {
		if _, err := New(cfg, &fakeSink{}); err == nil {
			t.Errorf("%s: New succeeded, want an error", name)
		}
	}
	if _, err := New(Config{Secrets: [][]byte{testSecret}}, nil); err == nil {
		t.Error("nil sink: New succeeded, want an error")
	}
}
