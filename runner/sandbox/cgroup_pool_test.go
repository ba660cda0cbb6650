package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A node's cgroups come ready-made from the spares, which are made up
// again after each take; the cgroups of bot processes that are gone are
// removed when a Sandbox starts.
func TestCgroupSpares(t *testing.T) {
	probe := findCgroupRoot(Limits{Processes: 77})
	if probe == nil {
		t.Skip("no writable cgroup v1 pids hierarchy here")
	}
	stale := filepath.Join(probe.pids, "kilroy-999999999-1")
	if err := os.Mkdir(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	r := findCgroupRoot(Limits{Processes: 77})
	waitFor(t, "the stale cgroup removed", func() bool { _, err := os.Stat(stale); return os.IsNotExist(err) })
	var taken []*nodeCgroup
	for range 3 {
		cg, err := r.take()
		if err != nil {
			t.Fatal(err)
		}
		taken = append(taken, cg)
		b, _ := os.ReadFile(filepath.Join(cg.dirs[0], "pids.max"))
		if got := strings.TrimSpace(string(b)); got != "77" {
			t.Errorf("pids.max = %q, want 77", got)
		}
		waitFor(t, "the spares made up", func() bool { return len(r.spare) == spareCgroups })
	}
	for _, cg := range append(taken, <-r.spare, <-r.spare) {
		cg.remove()
	}
	if taken[0].dirs[0] == taken[1].dirs[0] || taken[1].dirs[0] == taken[2].dirs[0] {
		t.Errorf("a cgroup was handed out twice: %v", taken)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(pollDeadline)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", pollDeadline, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
