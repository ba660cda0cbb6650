package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// spareSandbox returns a Sandbox whose jailed Runs can take spares, or
// skips saying why there are none here.
func spareSandbox(t *testing.T, cfg Config) *Sandbox {
	t.Helper()
	s := newTestSandbox(t, cfg)
	if !s.spareShell {
		t.Skipf("no spare jails here: %s is not dash", spareShell)
	}
	return s
}

// coldSandbox returns a Sandbox whose jailed Runs all start cold.
func coldSandbox(t *testing.T, cfg Config) *Sandbox {
	t.Helper()
	s := newTestSandbox(t, cfg)
	s.Close()
	return s
}

// spareSeen is a ready spare's bwrap pid and cgroup directories.
type spareSeen struct {
	pid  int
	dirs []string
}

// sparesOf returns s's ready spares, the next one taken first.
func sparesOf(s *Sandbox) []spareSeen {
	s.spares.mu.Lock()
	defer s.spares.mu.Unlock()
	var out []spareSeen
	for _, sp := range s.spares.spares {
		seen := spareSeen{pid: sp.cmd.Process.Pid}
		if sp.js.cg != nil {
			seen.dirs = slices.Clone(sp.js.cg.dirs)
		}
		out = append(out, seen)
	}
	return out
}

// runOut runs c with two writers into one buffer and returns the result
// and the output.
func runOut(t *testing.T, c Cmd) (Result, string) {
	t.Helper()
	var out combined
	c.Stdout, c.Stderr = out.writers()
	res, err := Run(context.Background(), c)
	if err != nil {
		t.Fatalf("Run(%q): %v", c.Argv, err)
	}
	return res, out.String()
}

// A node started from a spare jail sees what a cold-started one sees: the
// same environment, also variables a shell would change, the same
// arguments however quoted, descriptors, directory, identity and limits.
// (The environment's order is the shell's; nothing reads it in order.)
func TestSpareSeesWhatColdSees(t *testing.T) {
	spare := spareSandbox(t, Config{})
	cold := coldSandbox(t, Config{})
	ws := t.TempDir()
	env := append(jailEnv(), "OLDPWD=/old", "SHLVL=7", "_=/underscore", "PS1=$ ", "ENV=/env", "LINENO=3",
		"HISTFILE=/h", "QUOTED=it's \"x\" $(touch pwned) `id` \\ \t\nend", "EMPTY=", "UNICODE=ünï", "TMPDIR=/host/tmp", "PWD=/elsewhere")
	probes := []Cmd{
		{Argv: []string{"env", "-0"}},
		{Argv: []string{"bash", "-c", `printf '<%s>\n' "$0" "$@"; pwd; id; readlink /proc/self/fd/0; ls /proc/self/fd | tr '\n' ' '; echo; ulimit -a; hostname; ls`,
			"arg0", "it's", "", "two  words", "$HOME", "a\nb", "-x", ";", "*", `\'"`}},
	}
	for _, p := range probes {
		p.Dir, p.Env = ws, env
		var got [2]string
		for i, s := range []*Sandbox{spare, cold} {
			warm(t, s)
			res, out := runOut(t, Cmd{Argv: p.Argv, Dir: ws, Env: env, Jail: &Jail{Sandbox: s, Workspace: ws}})
			if res.ExitCode != 0 || res.spare != (s == spare) {
				t.Fatalf("%q: exit %d, from a spare %v (want %v):\n%s", p.Argv[0], res.ExitCode, res.spare, s == spare, out)
			}
			got[i] = out
		}
		if p.Argv[0] == "env" {
			got = [2]string{sortedNUL(got[0]), sortedNUL(got[1])}
			if !strings.Contains(got[1], "\x00SHLVL=7\x00") || !strings.Contains(got[1], "\x00TMPDIR=/tmp\x00") {
				t.Errorf("the cold environment lacks the probe's variables:\n%q", got[1])
			}
		}
		if diff := cmp.Diff(got[0], got[1]); diff != "" {
			t.Errorf("%q from a spare jail (-got) and cold (+want):\n%s", p.Argv[0], diff)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "pwned")); err == nil {
		t.Errorf("a variable's value ran as a command")
	}
}

func sortedNUL(s string) string {
	f := strings.Split(strings.TrimSuffix(s, "\x00"), "\x00")
	slices.Sort(f)
	return "\x00" + strings.Join(f, "\x00") + "\x00"
}

// A node may start as many processes from a spare jail as from a cold
// one, Limits.Processes minus bwrap's init and the shell: the spare's
// bwrap monitor, in the node's pids cgroup from the start, does not use
// up the node's budget.
func TestSpareKeepsTheProcessBudget(t *testing.T) {
	lim := Limits{Processes: 12}
	spare := spareSandbox(t, Config{Limits: lim})
	if spare.cgroups == nil || os.Geteuid() != 0 {
		t.Skip("needs a pids cgroup and root (RLIMIT_NPROC counts every process of a user, not a node's)")
	}
	cold := coldSandbox(t, Config{Limits: lim})
	// dash: a refused fork ends the shell at once (bash retries for seconds).
	script := `[ "$(hostname)" = kilroy-sandbox ] || { echo UNJAILED; exit 99; }
		n=0; while [ $n -lt 40 ]; do sleep 60 & n=$((n+1)); echo $n; done`
	var got []int
	for _, s := range []*Sandbox{spare, cold} {
		warm(t, s)
		ws := t.TempDir()
		res, out := runOut(t, Cmd{Argv: []string{"/bin/sh", "-c", script}, Dir: ws, Env: jailEnv(), Jail: &Jail{Sandbox: s, Workspace: ws}})
		if res.spare != (s == spare) || strings.Contains(out, "UNJAILED") {
			t.Fatalf("from a spare %v, want %v:\n%s", res.spare, s == spare, out)
		}
		n := 0
		for line := range strings.Lines(out) {
			if v, err := strconv.Atoi(strings.TrimSpace(line)); err == nil {
				n = v
			}
		}
		got = append(got, n)
	}
	if diff := cmp.Diff(got, []int{lim.Processes - 2, lim.Processes - 2}); diff != "" {
		t.Errorf("background processes a node started, from a spare and cold (-got +want):\n%s", diff)
	}
}

// A node started from a spare jail runs in the cgroups the bot made for
// that spare and under the Sandbox's rlimits from its first instruction:
// its first process reports them before it does anything else. Seen from
// inside, it is at the root of its cgroup namespace: bwrap made that
// namespace inside the node's cgroups (a cold jail's node is moved there
// after, and sees the path).
func TestSpareNodeIsBornInsideItsCgroups(t *testing.T) {
	lim := asleepLimits
	s := spareSandbox(t, Config{Limits: lim})
	if s.cgroups == nil {
		t.Skip("no writable cgroup v1 pids hierarchy here")
	}
	warm(t, s)
	dirs := sparesOf(s)[0].dirs
	c, token := asleepInJail(t, s, `grep -E ':(pids|memory):' /proc/self/cgroup | cut -d: -f3
			echo --; `)
	res, host, out := runAsleep(t, c, token)
	if !res.spare {
		t.Fatalf("the node started cold:\n%s", out)
	}
	wantCgroups(t, s, host, dirs, "the spare's")
	inside, limits, _ := strings.Cut(out, "--\n")
	if _, err := os.Stat("/proc/self/ns/cgroup"); err == nil {
		if diff := cmp.Diff(inside, "/\n/\n"); diff != "" {
			t.Errorf("the node's memory and pids cgroups seen from inside (-got +want):\n%s", diff)
		}
	}
	wantLimits(t, lim, limits)
}

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
