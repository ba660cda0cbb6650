package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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

// A node sees its cgroup's name in /proc/self/cgroup: it holds neither the
// bot's pid nor a count of its nodes. Another process's cgroup of that
// form is left alone while it is young or has a member, and removed once
// it is old and empty; this process's own are never taken.
func TestCgroupNameIsNotTheBots(t *testing.T) {
	r := findCgroupRoot(Limits{Processes: 77})
	if r == nil {
		t.Skip("no writable cgroup v1 pids hierarchy here")
	}
	s := coldSandbox(t, Config{Limits: Limits{Processes: 64}})
	j := &Jail{Sandbox: s, Workspace: t.TempDir()}
	var out combined
	stdout, stderr := out.writers()
	res, err := Run(t.Context(), Cmd{Argv: []string{"cat", "/proc/self/cgroup"}, Dir: j.Workspace, Env: jailEnv(),
		Stdout: stdout, Stderr: stderr, Jail: j})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Run: %v %+v\n%s", err, res, out.String())
	}
	inside := out.String()
	if !strings.Contains(inside, "kilroy-") {
		t.Fatalf("the node's /proc/self/cgroup names no node cgroup:\n%s", inside)
	}
	if pid := fmt.Sprintf("kilroy-%d-", os.Getpid()); strings.Contains(inside, pid) {
		t.Errorf("the node's /proc/self/cgroup holds the bot's pid (%s):\n%s", pid, inside)
	}

	mk := func(name string, age time.Duration) string {
		d := filepath.Join(r.pids, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(d) })
		if age > 0 {
			old := time.Now().Add(-age)
			if err := os.Chtimes(d, old, old); err != nil {
				t.Skipf("cannot date a cgroup directory back here: %v", err)
			}
		}
		return d
	}
	oldEmpty := mk(cgroupName(), 2*staleAfter)
	young := mk(cgroupName(), 0)
	busy := mk(cgroupName(), 2*staleAfter)
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait() })
	if err := os.WriteFile(filepath.Join(busy, "cgroup.procs"), []byte(strconv.Itoa(sleeper.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	ours, err := r.create(0)
	if err != nil {
		t.Fatal(err)
	}
	defer ours.remove()
	old := time.Now().Add(-2 * staleAfter)
	os.Chtimes(ours.dirs[0], old, old)

	findCgroupRoot(Limits{Processes: 77}) // removes what is stale, in the background
	waitFor(t, "the old empty cgroup removed", func() bool { _, err := os.Stat(oldEmpty); return os.IsNotExist(err) })
	for what, d := range map[string]string{"young": young, "busy": busy, "this process's own": ours.dirs[0]} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("the %s cgroup %s was taken: %v", what, filepath.Base(d), err)
		}
	}
	sleeper.Process.Kill()
	sleeper.Wait()
}
