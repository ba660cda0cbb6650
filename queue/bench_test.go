package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkEnqueueDelivery measures the webhook's durable step: one
// delivery with one job, committed to SQLite (WAL, synchronous FULL), each
// on its own PR so no supersede work is done. The webhook's p99 depends on
// it, so each variant also reports the p99 latency of one call.
func BenchmarkEnqueueDelivery(b *testing.B) {
	b.Run("sequential", func(b *testing.B) { benchEnqueue(b, false, false) })
	b.Run("parallel", func(b *testing.B) { benchEnqueue(b, true, false) })
	// As in the server: workers share the one SQLite connection.
	b.Run("parallel-working", func(b *testing.B) { benchEnqueue(b, true, true) })
}

func benchEnqueue(b *testing.B, parallel, working bool) {
	q := sqliteOpener(b.TempDir())(b)
	ctx := context.Background()
	if working {
		startQueue(b, q, func(context.Context, RunJob) error { return nil })
	}
	var (
		n   atomic.Int64
		mu  sync.Mutex
		lat []time.Duration
	)
	one := func(own *[]time.Duration) error {
		i := int(n.Add(1))
		d := Delivery{ID: fmt.Sprintf("bench-%d", i), Event: "pull_request"}
		start := time.Now()
		_, err := q.EnqueueDelivery(ctx, d, []RunArgs{args(i, "0123456789abcdef0123456789abcdef01234567", "ci")})
		*own = append(*own, time.Since(start))
		return err
	}
	b.ReportAllocs()
	b.ResetTimer()
	if parallel {
		b.SetParallelism(16) // 16×GOMAXPROCS goroutines, like concurrent webhook requests
		b.RunParallel(func(pb *testing.PB) {
			var own []time.Duration
			for pb.Next() {
				if err := one(&own); err != nil {
					b.Error(err)
					return
				}
			}
			mu.Lock()
			lat = append(lat, own...)
			mu.Unlock()
		})
	} else {
		for b.Loop() {
			if err := one(&lat); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	if len(lat) > 0 {
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	}
}

// BenchmarkEnqueueEvent measures the webhook's durable step as serve uses
// it: concurrent EnqueueEvent calls, each a new delivery with a payload
// the size of a decoded pull_request event, group-committed to SQLite
// (WAL, synchronous FULL), while the queue's workers share the database.
func BenchmarkEnqueueEvent(b *testing.B) {
	q := sqliteOpener(b.TempDir())(b)
	ctx := context.Background()
	startQueue(b, q, func(context.Context, RunJob) error { return nil })
	payload := json.RawMessage(benchEventPayload)
	var (
		n   atomic.Int64
		mu  sync.Mutex
		lat []time.Duration
	)
	b.ReportAllocs()
	b.SetParallelism(16) // 16×GOMAXPROCS goroutines, like concurrent webhook requests
	b.RunParallel(func(pb *testing.PB) {
		var own []time.Duration
		for pb.Next() {
			i := int(n.Add(1))
			d := Delivery{ID: fmt.Sprintf("bench-%d", i), Event: "pull_request",
				Heads: []PRHead{{Repo: "octo/widgets", PR: i, HeadSHA: fmt.Sprintf("%040d", i)}}}
			start := time.Now()
			if _, err := q.EnqueueEvent(ctx, d, EventArgs{Event: "pull_request", Payload: payload}); err != nil {
				b.Error(err)
				return
			}
			own = append(own, time.Since(start))
		}
		mu.Lock()
		lat = append(lat, own...)
		mu.Unlock()
	})
	b.StopTimer()
	if len(lat) > 0 {
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	}
}

// benchEventPayload is a decoded pull_request event as the runner stores it.
const benchEventPayload = `{"kind":"pull_request","action":"opened","installation_id":42,` +
	`"repo":{"owner":"octo","name":"widgets","full_name":"octo/widgets",` +
	`"clone_url":"https://github.com/octo/widgets.git","default_branch":"main"},` +
	`"pr":{"number":7,"head_sha":"0123456789abcdef0123456789abcdef01234567",` +
	`"head_repo_full_name":"octo/widgets","base_ref":"main","author_login":"octocat"},` +
	`"sender":{"login":"octocat","type":"User"},"command":{},"check_run":{},"check_suite":{}}`
