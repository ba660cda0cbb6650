package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
	"github.com/kilroy-bot/kilroy-bot/webhook"
)

// stubSink accepts every delivery without storing it.
type stubSink struct{ accepted atomic.Int32 }

func (s *stubSink) Accept(context.Context, webhook.Delivery, webhook.Event) (webhook.Accepted, error) {
	s.accepted.Add(1)
	return webhook.Accepted{Job: "stub"}, nil
}

// TestServeStartStop starts serve as runServe wires it, against a fake
// GitHub, with a stub sink and workers: it answers /healthz, /readyz and a
// signed ping, then shuts down on cancel and calls the workers' stop hook.
func TestServeStartStop(t *testing.T) {
	gh := ghapptest.New(t)
	secret := "start-test-secret"
	cfg, err := loadServeConfig([]string{
		"--listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--github-url", gh.APIURL(),
	}, envOf(map[string]string{
		"KILROY_APP_ID":           "4242",
		"KILROY_PRIVATE_KEY_FILE": gh.PrivateKeyFile(t),
		"KILROY_WEBHOOK_SECRET":   secret,
	}))
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	ctx, cancel := context.WithCancel(withLogger(context.Background(), newTestLogger(&logs)))
	defer cancel()
	sink := &stubSink{}
	var stopped atomic.Bool
	deps, err := wireServe(ctx, cfg, appWiring{RunSide: func(_ context.Context, w wired) (runSide, error) {
		if w.Queue == nil || w.App == nil || w.Metrics == nil {
			return runSide{}, errors.New("run side wired without the queue, App or metrics")
		}
		return runSide{
			Sink: sink,
			Start: func(context.Context) (func(context.Context) error, error) {
				return func(context.Context) error { stopped.Store(true); return nil }, nil
			},
		}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := buildServer(ctx, cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.run(ctx) }()
	base := "http://" + srv.Addr().String()

	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s = %d %q", path, resp.StatusCode, body)
		}
	}
	if body := getBody(t, base+"/metrics"); !strings.Contains(body, `kilroy_build_info{goversion="`+runtime.Version()+`"`) {
		t.Errorf("/metrics has no kilroy_build_info with this Go version:\n%s", body)
	}
	req := ghapptest.SignedRequest(t, base+"/webhooks/github", []byte(secret), "ping", "delivery-1",
		[]byte(`{"zen":"Keep it logically awesome.","hook_id":1,"hook":{"app_id":4242}}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted || sink.accepted.Load() != 1 {
		t.Errorf("signed ping = %d, %d accepted; want 202 and 1", resp.StatusCode, sink.accepted.Load())
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("serve did not stop within a minute of cancel")
	}
	if !stopped.Load() {
		t.Error("the workers' stop hook was not called")
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("server still answers after shutdown")
	}
	if strings.Contains(logs.String(), secret) {
		t.Errorf("logs contain the webhook secret:\n%s", logs.String())
	}
}

// TestServeNotWired: without a run side, or with one lacking a part, serve
// says what is missing rather than starting a server that queues nothing.
func TestServeNotWired(t *testing.T) {
	noWorkers := func(context.Context, wired) (runSide, error) { return runSide{Sink: &stubSink{}}, nil }
	tests := []struct {
		name   string
		wiring appWiring
		want   string
	}{
		{"no run side", appWiring{}, "not wired: no run side"},
		{"no workers", appWiring{RunSide: noWorkers}, "not wired: the run side has no workers"},
	}
	gh := ghapptest.New(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := serveConfig{DataDir: t.TempDir(), AppID: gh.AppID(), PrivateKey: secret(gh.PrivateKeyPEM()),
				GitHubURL: gh.APIURL(), WebhookSecret: secret("not-wired-secret"), Workers: 1}
			_, err := wireServe(context.Background(), cfg, tt.wiring)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("wireServe: %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// getBody GETs url and returns the body of a 200 answer.
func getBody(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d, %v", url, resp.StatusCode, err)
	}
	return string(body)
}
