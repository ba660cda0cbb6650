package ghapptest_test

import (
	"net"
	"net/http"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
)

// TestWithListenAddr: the server listens where it is told, and its URLs
// name that address, not a port of httptest's choosing.
func TestWithListenAddr(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s := ghapptest.New(t, ghapptest.WithListenAddr(addr))
	if got, want := s.APIURL(), "http://"+addr+"/api/v3/"; got != want {
		t.Errorf("APIURL() = %q, want %q", got, want)
	}
	if got, want := s.CloneURL("octo", "widgets"), "http://"+addr+"/octo/widgets.git"; got != want {
		t.Errorf("CloneURL() = %q, want %q", got, want)
	}
	// Without the App's JWT the API refuses, as GitHub does: what answers
	// on addr is the fake.
	resp, err := http.Get("http://" + addr + "/api/v3/app/installations")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /api/v3/app/installations on %s = %d, want %d", addr, resp.StatusCode, http.StatusUnauthorized)
	}
}
