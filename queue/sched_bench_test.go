//go:build unix

package queue

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/queue/pgtest"
)

// benchRuns is how many runs one iteration of BenchmarkSchedRuns works.
const benchRuns = 1000

// BenchmarkSchedRuns puts 1,000 runs of a one-node pipeline (a handler
// that returns at once) through the queue: enqueued one delivery each, as
// fast as one sender can, spread over 10 installations of 5 repositories,
// and worked by 4 workers per process. It reports runs/s from the first
// enqueue to the last start, p50 and p99 of enqueue→start (with 1,000 runs
// queued at once, mostly time waiting behind the others), and the
// scheduler's cost: its dispatch transactions per run and their mean time.
//
//	go test -run '^$' -bench SchedRuns -benchtime 1x ./queue
func BenchmarkSchedRuns(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		q := sqliteOptsOpener(b.TempDir())(b, Options{Workers: 4})
		benchSchedRuns(b, q, q)
	})
	b.Run("postgres-2-replicas", func(b *testing.B) {
		open := postgresOptsOpener(pgtest.Start(b))
		benchSchedRuns(b, open(b, Options{Workers: 4}), open(b, Options{Workers: 4}))
	})
}

// benchSchedRuns enqueues through the first queue; every distinct queue
// given works runs.
func benchSchedRuns(b *testing.B, queues ...*Queue) {
	rec := newStartRecorder()
	for i, q := range queues {
		if i > 0 && q == queues[0] {
			continue
		}
		startQueue(b, q, rec.handle)
	}
	var dl deliveries
	var lat []time.Duration
	var elapsed time.Duration
	iter := 0
	for b.Loop() {
		rec.reset()
		begin := time.Now()
		for i := range benchRuns {
			a := tenantArgs(int64(1+i%10), fmt.Sprintf("org%d/repo%d", i%10, i%5), iter*benchRuns+i+1)
			a.RunID = NewRunID()
			rec.enqueued(a.RunID)
			enqueue(b, queues[0], dl.next(), a)
		}
		lat = append(lat, rec.wait(b, benchRuns)...)
		elapsed += rec.last.Sub(begin)
		iter++
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "runs/s")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	var passes, passTime int64
	for i, q := range queues {
		if i > 0 && q == queues[0] {
			continue
		}
		passes += q.sched.passes.Load()
		passTime += q.sched.passTime.Load()
	}
	if passes > 0 {
		b.ReportMetric(float64(passes)/float64(len(lat)), "passes/run")
		b.ReportMetric(float64(passTime)/float64(passes)/1e6, "ms/pass")
	}
}

// startRecorder is a run handler that records when each run started.
type startRecorder struct {
	mu    sync.Mutex
	at    map[string]time.Time // enqueue time, by run id
	lat   []time.Duration
	last  time.Time
	done  chan struct{}
	count int
}

func newStartRecorder() *startRecorder { return &startRecorder{at: map[string]time.Time{}} }

func (r *startRecorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.at, r.lat, r.count, r.done = map[string]time.Time{}, nil, 0, make(chan struct{})
}

// enqueued records the run's enqueue time, just before it is enqueued:
// the handler may start it before EnqueueDelivery returns.
func (r *startRecorder) enqueued(runID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.at[runID] = time.Now()
}

func (r *startRecorder) handle(_ context.Context, job RunJob) error {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if at, ok := r.at[job.RunID]; ok {
		r.lat = append(r.lat, now.Sub(at))
		r.last = now
		r.count++
		if r.count == len(r.at) && r.count == benchRuns {
			close(r.done)
		}
	}
	return nil
}

// wait waits for n runs to start and returns their latencies.
func (r *startRecorder) wait(b *testing.B, n int) []time.Duration {
	b.Helper()
	r.mu.Lock()
	done := r.done
	r.mu.Unlock()
	select {
	case <-done:
	case <-time.After(10 * time.Minute):
		b.Fatalf("%d runs did not all start within 10 minutes", n)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.lat)
}
