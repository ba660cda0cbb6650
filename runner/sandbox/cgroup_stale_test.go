package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The cgroups of bot processes that are gone are removed when a Sandbox
// starts; a node's pids.max is its process limit plus the headroom asked
// for.
func TestCgroupStaleAndHeadroom(t *testing.T) {
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
	var got []string
	for _, headroom := range []int{0, 1} {
		cg, err := r.create(headroom)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(cg.dirs[0], "pids.max"))
		got = append(got, strings.TrimSpace(string(b)))
		cg.remove()
	}
	if diff := cmp.Diff(got, []string{"77", "78"}); diff != "" {
		t.Errorf("pids.max for headroom 0 and 1 (-got +want):\n%s", diff)
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
