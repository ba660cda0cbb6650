package runs

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
	"github.com/kilroy-bot/kilroy-bot/queue"
	"github.com/kilroy-bot/kilroy-bot/queue/pgtest"
	"github.com/kilroy-bot/kilroy-bot/runner/gc"
	"github.com/kilroy-bot/kilroy-bot/server"
)

var (
	runsFlag = flag.Int("runs", 1000, "pull request runs per sub-benchmark")
	keepFlag = flag.Int("keep", 100, "newest runs inside the retention window")
)

// window is the retention window of the sweep; its length does not
// matter, the sweep's clock is set from it.
const window = time.Hour

// runWait bounds the wait for a batch of runs; hitting it fails.
const runWait = 45 * time.Minute

func BenchmarkRuns(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		benchRuns(b, 1, queue.Options{})
	})
	b.Run("postgres-2-replicas", func(b *testing.B) {
		benchRuns(b, 2, queue.Options{DatabaseURL: pgtest.Start(b)})
	})
}

// bench is one round's state: the replicas, the pull requests and what
// their runs reported.
type bench struct {
	b        *testing.B
	replicas []*replica
	pulls    []pull
	done     chan finished
	accepted map[string]time.Time // by pull request key
	latency  []time.Duration      // Accept to the end of the run's handler
	handler  []time.Duration      // the run's handler alone
	runIDs   map[string]string    // pull request key → run id
}

func benchRuns(b *testing.B, replicas int, opts queue.Options) {
	n, keep := *runsFlag, *keepFlag
	if keep <= 0 || keep >= n {
		b.Fatalf("-keep %d: want between 1 and -runs %d", keep, n-1)
	}
	for b.Loop() {
		b.StopTimer()
		gh := ghapptest.New(b)
		app := newApp(b, gh)
		bn := &bench{b: b, pulls: seedPulls(b, gh, n), done: make(chan finished, n),
			accepted: map[string]time.Time{}, runIDs: map[string]string{}}
		for range replicas {
			bn.replicas = append(bn.replicas, startReplica(b, gh, app, opts, bn.done))
		}
		b.StartTimer()
		start := time.Now()
		old := bn.batch(bn.pulls[:n-keep])
		took := time.Since(start)
		b.StopTimer()
		bn.waitInactive(old)
		cutoff := nextSecond()
		b.StartTimer()
		start = time.Now()
		kept := bn.batch(bn.pulls[n-keep:])
		took += time.Since(start)
		b.StopTimer()
		bn.waitInactive(kept)
		b.Logf("%d runs (%d, then %d) on %d replica(s) in %s", n, n-keep, keep, replicas, took.Round(time.Millisecond))
		bn.checkChecks(gh)
		bn.report(took)
		bn.sweep(cutoff, old, kept)
		b.StartTimer() // b.Loop wants it running
	}
}

// batch delivers pulls, round-robin over the replicas as a load balancer
// would, and waits for every run to end; it returns the runs' ids.
func (bn *bench) batch(pulls []pull) []string {
	b := bn.b
	for i, p := range pulls {
		bn.accepted[p.key] = time.Now()
		srv := bn.replicas[i%len(bn.replicas)].srv
		if _, err := srv.Accept(context.Background(), "delivery-"+p.key, "pull_request", p.ev); err != nil {
			b.Fatalf("accept %s: %v", p.key, err)
		}
	}
	var ids []string
	deadline := time.After(runWait)
	for range pulls {
		select {
		case f := <-bn.done:
			if f.err != nil {
				b.Fatalf("run %s of %s: %v", f.runID, f.key, f.err)
			}
			if _, dup := bn.runIDs[f.key]; dup {
				b.Fatalf("pull request %s ran twice", f.key)
			}
			bn.runIDs[f.key] = f.runID
			bn.latency = append(bn.latency, f.at.Sub(bn.accepted[f.key]))
			bn.handler = append(bn.handler, f.took)
			ids = append(ids, f.runID)
		case <-deadline:
			b.Fatalf("%d of %d runs ended within %s", len(ids), len(pulls), runWait)
		}
	}
	return ids
}

func (bn *bench) waitInactive(ids []string) {
	for _, r := range bn.replicas {
		waitInactive(bn.b, r.q, ids)
	}
}

// nextSecond waits for the clock to pass the next whole second and
// returns that second: everything of a run started later (its id's time,
// its files' times, its commits' whole-second times) is not before it,
// everything of a run that ended earlier is.
func nextSecond() time.Time {
	s := time.Now().Truncate(time.Second).Add(time.Second)
	for !time.Now().After(s) {
		time.Sleep(time.Until(s) + time.Millisecond)
	}
	return s
}

// checkChecks fails unless every run's summary check completed with
// success on the fake GitHub.
func (bn *bench) checkChecks(gh *ghapptest.Server) {
	ok := map[string]bool{}
	for _, r := range benchRepos {
		for _, c := range gh.CheckRuns(r[0], r[1]) {
			if c.Name == "kilroy/ci" && c.Status == "completed" && c.Conclusion == "success" {
				ok[c.ExternalID] = true
			}
		}
	}
	for key, id := range bn.runIDs {
		if !ok[id] {
			bn.b.Fatalf("run %s of %s: no successful kilroy/ci check", id, key)
		}
	}
}

// report reports throughput and latencies.
func (bn *bench) report(took time.Duration) {
	bn.b.ReportMetric(float64(len(bn.latency))/took.Seconds(), "runs/s")
	for _, l := range []struct {
		prefix string
		d      []time.Duration
	}{{"", bn.latency}, {"run-", bn.handler}} {
		d := slices.Clone(l.d)
		slices.Sort(d)
		bn.b.ReportMetric(ms(d[len(d)/2]), l.prefix+"p50-ms")
		bn.b.ReportMetric(ms(d[len(d)*99/100]), l.prefix+"p99-ms")
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// sweep sweeps every replica's data dir with its clock one window past
// cutoff, reports the data dirs before and after, and fails unless
// exactly the runs in kept are left.
func (bn *bench) sweep(cutoff time.Time, old, kept []string) {
	b := bn.b
	before := bn.usage()
	ret := gc.Retention{Runs: window, Branches: window, Mirrors: window}
	for _, r := range bn.replicas {
		res, err := r.srv.Sweep(context.Background(), server.RetentionOptions{Retention: ret,
			Now: func() time.Time { return cutoff.Add(window) }})
		if err != nil {
			b.Fatalf("sweep %s: %v", r.dataDir, err)
		}
		if len(res.Failed) > 0 {
			b.Fatalf("sweep %s: %v", r.dataDir, res.Failed)
		}
	}
	after := bn.usage()
	b.Logf("data dirs before the sweep: %s; after: %s", before, after)
	before.report(b, "before")
	after.report(b, "after")
	if err := after.check(old, kept); err != nil {
		b.Fatal(fmt.Errorf("after the sweep: %w", err))
	}
}
