package sandbox

import (
	"context"
	"slices"
	"testing"
	"time"
)

// BenchmarkJailStart measures what the sandbox adds to starting a process
// (/bin/true): plain and jailed starts alternate within one run, so load
// on the machine hits both alike, and the benchmark reports the median of
// each, the ratio of the medians, and the overhead per start (jailed minus
// the plain start just before it): its median (target: at most 5 ms) and
// its min and max. Every jailed start is cold: a chain of nodes takes
// prewarmed jails, which bench/chain measures.
//
//	go test -run '^$' -bench JailStart -benchtime 200x ./runner/sandbox/
func BenchmarkJailStart(b *testing.B) {
	s := benchSandbox(b)
	ws := b.TempDir()
	// The environment the bot gives a tool node (runner's nodeHost): the
	// jail then binds the toolchains and caches a real node's does.
	env := NodeEnv(EnvSpec{Host: HostEnv()})
	jail := NodeJail(s, HostEnv(), ws, b.TempDir(), b.TempDir(), b.TempDir())
	var plain, jailed, diff []time.Duration
	b.ResetTimer()
	for b.Loop() {
		p := startTrue(b, ws, env, nil)
		j := startTrue(b, ws, env, jail)
		plain, jailed, diff = append(plain, p), append(jailed, j), append(diff, j-p)
	}
	b.StopTimer()
	b.ReportMetric(ms(median(plain)), "plain-ms")
	b.ReportMetric(ms(median(jailed)), "jailed-ms")
	b.ReportMetric(ms(median(diff)), "overhead-ms")
	b.ReportMetric(ms(slices.Min(diff)), "overhead-min-ms")
	b.ReportMetric(ms(slices.Max(diff)), "overhead-max-ms")
	b.ReportMetric(float64(median(jailed))/float64(median(plain)), "ratio")
}

// benchSandbox is a Sandbox that works here, or skips the benchmark.
func benchSandbox(b *testing.B) *Sandbox {
	s, err := New(Config{PATH: HostEnv()["PATH"], StateDir: b.TempDir()})
	if err == nil {
		err = s.SelfTest(context.Background())
	}
	if err != nil {
		b.Skipf("sandbox unavailable: %v", err)
	}
	b.Cleanup(s.Close)
	return s
}

// startTrue runs /bin/true in ws, jailed in j (nil: plain), and returns
// how long it took.
func startTrue(b *testing.B, ws string, env []string, j *Jail) time.Duration {
	t0 := time.Now()
	res, err := Run(context.Background(), Cmd{Argv: []string{"true"}, Dir: ws, Env: env, Jail: j})
	if err != nil || res.ExitCode != 0 {
		b.Fatalf("run: %v (exit %d)", err, res.ExitCode)
	}
	return time.Since(t0)
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
