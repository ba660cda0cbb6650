package ghapp

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// inFlight wraps the transport and counts concurrent check-run PATCHes
// and pull-request GETs. The first PATCH is held until release closes;
// each GET waits until all wantReads GETs are in flight together.
type inFlight struct {
	wantReads int
	firstIn   chan struct{}
	release   chan struct{}
	allReads  chan struct{}

	mu                sync.Mutex
	writes, maxWrites int
	arrivedReads      int
	held              bool
}

func newInFlight(wantReads int) *inFlight {
	return &inFlight{wantReads: wantReads, firstIn: make(chan struct{}),
		release: make(chan struct{}), allReads: make(chan struct{})}
}

func (o *inFlight) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		switch {
		case req.Method == "PATCH" && strings.Contains(req.URL.Path, "/check-runs/"):
			o.mu.Lock()
			o.writes++
			o.maxWrites = max(o.maxWrites, o.writes)
			first := !o.held
			o.held = true
			o.mu.Unlock()
			if first {
				close(o.firstIn)
				<-o.release
			}
			defer func() { o.mu.Lock(); o.writes--; o.mu.Unlock() }()
		case req.Method == "GET" && strings.Contains(req.URL.Path, "/pulls/"):
			o.mu.Lock()
			o.arrivedReads++
			if o.arrivedReads == o.wantReads {
				close(o.allReads)
			}
			o.mu.Unlock()
			<-o.allReads // a read that waited on another would never get here
		}
		return next.RoundTrip(req)
	})
}

func (o *inFlight) maxConcurrentWrites() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.maxWrites
}

func TestWritesSerialisedReadsConcurrent(t *testing.T) {
	const writers, readers = 6, 3
	obs := newInFlight(readers)
	f := newFixture(t, obs.wrap)
	f.srv.AddPull("acme", "widgets", 3, f.sha, "main", "", nil)
	warm := f.client(t)
	id, err := warm.CreateCheckRun(t.Context(), f.r, CheckRunCreate{Name: "kilroy/ci", HeadSHA: f.sha})
	if err != nil {
		t.Fatalf("CreateCheckRun: %v", err)
	}

	// Writers use two clients of the same installation, as two events
	// would: the lock is the App's, not the client's.
	clients := []*Client{f.client(t), f.client(t)}
	writeErrs := make(chan error, writers)
	for i := range writers {
		go func() {
			writeErrs <- clients[i%2].UpdateCheckRun(t.Context(), f.r, id, CheckRunUpdate{Status: "in_progress"})
		}()
	}
	select {
	case <-obs.firstIn:
	case <-time.After(10 * time.Second):
		t.Fatal("no PATCH arrived")
	}

	// With a write held, reads still go through, all at once.
	readErrs := make(chan error, readers)
	for i := range readers {
		go func() {
			_, err := clients[i%2].PullRequest(t.Context(), f.r, 3)
			readErrs <- err
		}()
	}
	for range readers {
		select {
		case err := <-readErrs:
			if err != nil {
				t.Errorf("PullRequest: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("reads did not complete while a write was in flight: reads are serialised")
		}
	}

	close(obs.release)
	for range writers {
		if err := <-writeErrs; err != nil {
			t.Errorf("UpdateCheckRun: %v", err)
		}
	}
	if got := obs.maxConcurrentWrites(); got != 1 {
		t.Errorf("max concurrent writes = %d, want 1", got)
	}
	if n := len(f.requests("PATCH", "")); n != writers {
		t.Errorf("fake answered %d PATCHes, want %d", n, writers)
	}
}

func TestWritesOfDifferentInstallationsAreIndependent(t *testing.T) {
	f := newFixture(t, nil)
	a, b := f.app.state(1), f.app.state(2)
	if err := a.writes.acquire(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer a.writes.release()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := b.writes.acquire(ctx); err != nil {
		t.Fatalf("installation 2 blocked by installation 1: %v", err)
	}
	b.writes.release()
	if f.app.state(1) != a {
		t.Error("state(1) is not kept between calls")
	}
}
