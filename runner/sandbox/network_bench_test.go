package sandbox

import (
	"os"
	"testing"
)

// BenchmarkRunNS is what a run's network namespace costs once: made,
// pasta ready, routes set, and ended.
func BenchmarkRunNS(b *testing.B) {
	s := newBenchNetPool(b)
	for b.Loop() {
		n, err := newRunNS(s.cfg)
		if err != nil {
			b.Fatal(err)
		}
		n.close()
	}
}

// BenchmarkNetDo is what starting a process inside a run's namespace adds
// to each jail start: a hop to a locked thread and two setns.
func BenchmarkNetDo(b *testing.B) {
	p := newBenchNetPool(b)
	l, err := p.lease("bench")
	if err != nil {
		b.Fatal(err)
	}
	defer l.release()
	for b.Loop() {
		if err := l.do(func() {}); err != nil {
			b.Fatal(err)
		}
	}
}

func newBenchNetPool(b *testing.B) *netPool {
	if os.Geteuid() != 0 {
		b.Skip("network public needs root")
	}
	s, err := New(Config{Network: NetworkPublic, PATH: HostEnv()["PATH"], StateDir: b.TempDir()})
	if err != nil {
		b.Skip(err)
	}
	b.Cleanup(s.Close)
	return s.nets
}
