package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// asleepLimits is the Limits the asleep tests give their Sandbox.
var asleepLimits = Limits{Processes: 50, MemoryBytes: 1 << 30, FileSizeBytes: 1 << 29, CPUTime: time.Hour}

// asleepInJail is a Cmd of s's jail that runs script, prints its rlimits
// (ulimit -u -d -f -t -c) and then sleeps as a process named after token.
func asleepInJail(t *testing.T, s *Sandbox, script string) (c Cmd, token string) {
	ws := t.TempDir()
	token = fmt.Sprintf("kilroy-asleep-%d-%s", os.Getpid(), t.Name())
	return Cmd{Argv: []string{"bash", "-c", script + `ulimit -u; ulimit -d; ulimit -f; ulimit -t; ulimit -c; exec -a ` + token + `-sleep sleep 300`},
		Dir: ws, Env: jailEnv(), Jail: &Jail{Sandbox: s, Workspace: ws}, KillGrace: 200 * time.Millisecond}, token
}

// runAsleep runs c (asleepInJail) until it sleeps, reads that process's
// cgroups from the host, then cancels the Run; it returns the Run's
// result, the cgroups (cgroupDirs) and the output.
func runAsleep(t *testing.T, c Cmd, token string) (Result, map[string]string, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out combined
	c.Stdout, c.Stderr = out.writers()
	done := make(chan Result, 1)
	go func() {
		res, err := Run(ctx, c)
		if err != nil {
			t.Errorf("Run: %v", err)
		}
		done <- res
	}()
	waitDaemons(t, token, 1, out.String)
	host := cgroupDirs(t, pidsWith(token)[0])
	cancel()
	return <-done, host, out.String()
}

// wantCgroups fails unless host (cgroupDirs) holds every one of dirs, the
// jail's cgroups (whose names them in the message).
func wantCgroups(t *testing.T, s *Sandbox, host map[string]string, dirs []string, whose string) {
	t.Helper()
	for _, d := range dirs {
		ctrl := "memory"
		if strings.HasPrefix(d, s.cgroups.pids+"/") {
			ctrl = "pids"
		}
		if host[ctrl] != d {
			t.Errorf("the node's %s cgroup is %s, want %s %s", ctrl, host[ctrl], whose, d)
		}
	}
}

// wantLimits fails unless got is what ulimit -u -d -f -t -c print under lim.
func wantLimits(t *testing.T, lim Limits, got string) {
	t.Helper()
	want := fmt.Sprintf("%d\n%d\n%d\n%d\n0\n", lim.Processes, lim.MemoryBytes>>10, lim.FileSizeBytes>>10, int(lim.CPUTime.Seconds()))
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("the node's ulimit -u -d -f -t -c (-got +want):\n%s", diff)
	}
}

// cgroupDirs maps the controllers of process pid to its cgroup
// directories, named as findCgroupRoot names them.
func cgroupDirs(t *testing.T, pid int) map[string]string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for line := range strings.Lines(string(b)) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) == 3 {
			for _, c := range strings.Split(parts[1], ",") {
				m[c] = filepath.Join("/sys/fs/cgroup", parts[1], parts[2])
			}
		}
	}
	return m
}

func pidsWith(token string) []int {
	var out []int
	files, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && bytes.HasPrefix(b, []byte(token)) {
			if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(f))); err == nil {
				out = append(out, pid)
			}
		}
	}
	return out
}
