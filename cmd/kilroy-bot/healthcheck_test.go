package main

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

func TestHealthcheck(t *testing.T) {
	var status atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(int(status.Load()))
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	for _, tc := range []struct {
		name   string
		status int
		args   []string
		env    map[string]string
		code   int
		stderr string
	}{
		{"listen port from the environment", 200, nil, map[string]string{"KILROY_LISTEN": ":" + port}, 0, ""},
		{"explicit url", 200, []string{"--url", srv.URL + "/healthz"}, nil, 0, ""},
		{"unhealthy", 503, []string{"--url", srv.URL + "/healthz"}, nil, 1, "503"},
		{"nobody listening", 200, []string{"--url", closed.URL + "/healthz"}, nil, 1, "connection refused"},
		{"bad listen setting", 200, nil, map[string]string{"KILROY_LISTEN": "8080"}, 2, "KILROY_LISTEN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status.Store(int32(tc.status))
			var out, errb bytes.Buffer
			code := runHealthcheck(t.Context(), tc.args, envOf(tc.env), &out, &errb)
			if code != tc.code || !strings.Contains(errb.String(), tc.stderr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errb.String(), tc.code, tc.stderr)
			}
		})
	}
}
