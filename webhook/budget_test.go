package webhook

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"
)

// stall opens a connection to srv that posts a delivery declaring a body of
// declared bytes and sends one of them, then leaves the connection open.
func stall(t *testing.T, srv *httptest.Server, declared int) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	head := "POST /webhooks/github HTTP/1.1\r\nHost: kilroy\r\nContent-Type: application/json\r\n" +
		"X-GitHub-Event: ping\r\nX-GitHub-Delivery: stalled\r\n" +
		"X-Hub-Signature-256: " + sig256(testSecret, []byte("{")) + "\r\n" +
		fmt.Sprintf("Content-Length: %d\r\n\r\n{", declared)
	if _, err := c.Write([]byte(head)); err != nil {
		t.Fatal(err)
	}
	return c
}

// waitInUse polls until the handler's budget holds want bytes.
func waitInUse(t *testing.T, h *Handler, want int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for h.budget.inUse() != want {
		if time.Now().After(deadline) {
			t.Fatalf("bodies in flight hold %d bytes of the budget, want %d", h.budget.inUse(), want)
		}
		time.Sleep(time.Millisecond)
	}
}

// post sends a signed ping delivery to srv and returns the status.
func post(t *testing.T, srv *httptest.Server) int {
	t.Helper()
	body := []byte(`{"zen":"Keep it logically awesome.","hook_id":1}`)
	r, err := http.NewRequest(http.MethodPost, srv.URL+"/webhooks/github", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	r.Header = delivery("ping", "d-live", body).Header
	resp, err := srv.Client().Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// heapInUse is the live heap after a collection.
func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestStalledBodiesStayWithinBudget: connections that declare a large body
// and send one byte each hold one read chunk, not their declared length;
// the heap grows by no more than the budget, and the server still takes
// deliveries.
func TestStalledBodiesStayWithinBudget(t *testing.T) {
	const (
		conns    = 60
		maxBody  = 4 << 20
		declared = maxBody - 1
		budget   = maxBody + 1
		overhead = 8 << 20 // connections' own buffers and goroutines
	)
	h := newHandler(t, Config{MaxBody: maxBody, BodyBudget: budget}, &fakeSink{})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close) // after the stalled connections close
	before := heapInUse()
	for range conns {
		stall(t, srv, declared)
	}
	waitInUse(t, h, conns*(bodyChunk+1))
	if grew := heapInUse() - before; grew > budget+overhead {
		t.Errorf("%d stalled deliveries grew the heap by %d bytes, want at most %d", conns, grew, budget+overhead)
	}
	if code := post(t, srv); code != http.StatusAccepted {
		t.Errorf("a delivery during the stall: status %d, want 202", code)
	}
}

// TestBodyBudgetFull: a delivery that does not fit in the budget is a 503,
// and deliveries are taken again once bodies in flight end.
func TestBodyBudgetFull(t *testing.T) {
	// Room for exactly the stalled bodies: each holds one byte and a chunk.
	const stalled, budget = 3, 3*(bodyChunk+1) + 100
	h := newHandler(t, Config{MaxBody: budget - 1, BodyBudget: budget}, &fakeSink{})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close) // after the stalled connections close
	var conns []net.Conn
	for i := range stalled {
		conns = append(conns, stall(t, srv, budget-1))
		waitInUse(t, h, int64(i+1)*(bodyChunk+1))
	}
	if code := post(t, srv); code != http.StatusServiceUnavailable {
		t.Errorf("a delivery past the budget: status %d, want 503", code)
	}
	conns[0].Close()
	waitInUse(t, h, (stalled-1)*(bodyChunk+1))
	if code := post(t, srv); code != http.StatusAccepted {
		t.Errorf("a delivery once a body ended: status %d, want 202", code)
	}
}
