package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// warmSeen is a prewarmed jail's bwrap pid and cgroup directories.
type warmSeen struct {
	pid  int
	dirs []string
}

// prewarmedOf returns s's prewarmed jails.
func prewarmedOf(s *Sandbox) []warmSeen {
	s.prewarm.mu.Lock()
	defer s.prewarm.mu.Unlock()
	var out []warmSeen
	for _, pw := range s.prewarm.list {
		<-pw.ready
		if pw.w == nil {
			continue // could not start; the Run starts afresh
		}
		seen := warmSeen{pid: pw.w.cmd.Process.Pid}
		if pw.w.js.cg != nil {
			seen.dirs = slices.Clone(pw.w.js.cg.dirs)
		}
		out = append(out, seen)
	}
	return out
}

// prewarm prewarms c, and fails unless s holds it.
func prewarm(t *testing.T, s *Sandbox, c Cmd) warmSeen {
	t.Helper()
	before := len(prewarmedOf(s))
	Prewarm(c)
	got := prewarmedOf(s)
	if len(got) != before+1 {
		t.Fatalf("Prewarm(%q): %d jails prewarmed, want %d", c.Argv, len(got), before+1)
	}
	return got[len(got)-1]
}

// gone reports whether a prewarmed jail's process was reaped and its cgroups
// removed.
func gone(sp warmSeen) bool {
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", sp.pid)); err == nil {
		return false
	}
	for _, d := range sp.dirs {
		if _, err := os.Stat(d); err == nil {
			return false
		}
	}
	return true
}

// A node whose jail was prewarmed sees what a cold-started one sees, files
// written into its workspace after the prewarm included: bwrap bound the
// directories, not what was in them.
func TestPrewarmedSeesWhatColdSees(t *testing.T) {
	s := newTestSandbox(t, Config{})
	cold := coldSandbox(t, Config{})
	ws := t.TempDir()
	env := append(jailEnv(), "QUOTED=it's \"x\" $(touch pwned) `id` \\ \t\nend", "SHLVL=7", "EMPTY=")
	probes := [][]string{
		{"env", "-0"},
		{"bash", "-c", `printf '<%s>\n' "$0" "$@"; pwd; id; ls /proc/self/fd | tr '\n' ' '; echo; ulimit -a; hostname; cat later`,
			"arg0", "it's", "", "a\nb", "*"},
	}
	for _, argv := range probes {
		os.Remove(filepath.Join(ws, "later"))
		prewarm(t, s, Cmd{Argv: argv, Dir: ws, Env: env, Jail: &Jail{Sandbox: s, Workspace: ws}})
		if err := os.WriteFile(filepath.Join(ws, "later"), []byte("written after the prewarm\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		res, got := runOut(t, Cmd{Argv: argv, Dir: ws, Env: env, Jail: &Jail{Sandbox: s, Workspace: ws}})
		if res.ExitCode != 0 || !res.prewarmed {
			t.Fatalf("%q: exit %d, prewarmed %v (want a prewarmed jail):\n%s", argv[0], res.ExitCode, res.prewarmed, got)
		}
		_, want := runOut(t, Cmd{Argv: argv, Dir: ws, Env: env, Jail: &Jail{Sandbox: cold, Workspace: ws}})
		if argv[0] == "env" {
			got, want = sortedNUL(got), sortedNUL(want)
		} else if !strings.Contains(want, "written after the prewarm") {
			t.Errorf("the cold probe does not read the later file:\n%s", want)
		}
		if diff := cmp.Diff(got, want); diff != "" {
			t.Errorf("%q from a prewarmed jail (-got) and cold (+want):\n%s", argv[0], diff)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "pwned")); err == nil {
		t.Errorf("a variable's value ran as a command")
	}
}

// A prewarmed jail runs only the Cmd it was made for: another command, or
// the same one with another environment or directory, starts as it would
// have, and the prewarmed one still serves its own Run afterwards.
func TestPrewarmedOnlyForItsOwnCmd(t *testing.T) {
	s := newTestSandbox(t, Config{})
	ws, other := t.TempDir(), t.TempDir()
	mine := Cmd{Argv: []string{"echo", "mine"}, Dir: ws, Env: jailEnv(), Jail: &Jail{Sandbox: s, Workspace: ws}}
	prewarm(t, s, mine)
	for _, c := range []Cmd{
		{Argv: []string{"echo", "other"}, Dir: ws, Env: jailEnv(), Jail: &Jail{Sandbox: s, Workspace: ws}},
		{Argv: mine.Argv, Dir: ws, Env: append(jailEnv(), "EXTRA=1"), Jail: &Jail{Sandbox: s, Workspace: ws}},
		{Argv: mine.Argv, Dir: other, Env: jailEnv(), Jail: &Jail{Sandbox: s, Workspace: other}},
	} {
		res, out := runOut(t, c)
		if res.ExitCode != 0 || res.prewarmed || out != c.Argv[1]+"\n" {
			t.Errorf("%q in %s: exit %d, prewarmed %v, output %q; want its own jail", c.Argv, c.Dir, res.ExitCode, res.prewarmed, out)
		}
	}
	res, out := runOut(t, mine)
	if res.ExitCode != 0 || !res.prewarmed || out != "mine\n" {
		t.Errorf("the prewarmed Cmd: exit %d, prewarmed %v, output %q", res.ExitCode, res.prewarmed, out)
	}
}

// A prewarmed jail no Run takes ends after its time, with its cgroups and
// the empty directories its plan made (a stage directory); a Run then
// starts as without it.
func TestPrewarmedExpires(t *testing.T) {
	s := newTestSandbox(t, Config{})
	s.prewarm.ttl = 200 * time.Millisecond
	ws := t.TempDir()
	stage := filepath.Join(t.TempDir(), "nodes", "n1")
	c := Cmd{Argv: []string{"true"}, Dir: ws, Env: jailEnv(), Jail: &Jail{Sandbox: s, Workspace: ws, Stage: stage}}
	sp := prewarm(t, s, c)
	if _, err := os.Stat(stage); err != nil {
		t.Fatalf("the prewarmed jail's stage directory: %v", err)
	}
	waitFor(t, "the prewarmed jail ended", func() bool { return len(prewarmedOf(s)) == 0 && gone(sp) })
	if _, err := os.Stat(stage); !os.IsNotExist(err) {
		t.Errorf("the stage directory made for the expired jail is still there (%v)", err)
	}
	if res, _ := runOut(t, c); res.ExitCode != 0 || res.prewarmed {
		t.Errorf("after expiry: exit %d, prewarmed %v; want a jail of its own", res.ExitCode, res.prewarmed)
	}
}

// Close ends prewarmed jails too; Runs then start cold.
func TestSandboxCloseEndsPrewarmed(t *testing.T) {
	s := newTestSandbox(t, Config{})
	ws := t.TempDir()
	c := Cmd{Argv: []string{"echo", "x"}, Dir: ws, Env: jailEnv(), Jail: &Jail{Sandbox: s, Workspace: ws}}
	sp := prewarm(t, s, c)
	s.Close()
	if !gone(sp) {
		t.Errorf("the prewarmed jail %d (or its cgroups) still there after Close", sp.pid)
	}
	Prewarm(c)
	if n := len(prewarmedOf(s)); n != 0 {
		t.Errorf("%d jails prewarmed after Close", n)
	}
	if res, out := runOut(t, c); res.ExitCode != 0 || res.prewarmed || out != "x\n" {
		t.Errorf("after Close: exit %d, prewarmed %v, output %q; want a cold start that works", res.ExitCode, res.prewarmed, out)
	}
}

// A prewarmed jail that died while it waited (killed from outside, or its
// mounts failed) costs its Run nothing but a fresh start.
func TestPrewarmedKilledWhileWaiting(t *testing.T) {
	s := newTestSandbox(t, Config{})
	ws := t.TempDir()
	c := Cmd{Argv: []string{"echo", "fresh"}, Dir: ws, Env: jailEnv(), Jail: &Jail{Sandbox: s, Workspace: ws}}
	sp := prewarm(t, s, c)
	syscall.Kill(sp.pid, syscall.SIGKILL)
	waitFor(t, "the prewarmed jail dead", func() bool { return !alive(sp.pid) })
	res, out := runOut(t, c)
	if res.ExitCode != 0 || res.prewarmed || out != "fresh\n" {
		t.Errorf("exit %d, prewarmed %v, output %q; want a fresh start that works", res.ExitCode, res.prewarmed, out)
	}
	if !gone(sp) {
		t.Errorf("the killed prewarmed jail %d was not reaped, or its cgroups not removed", sp.pid)
	}
}

// A prewarmed jail's bwrap has the node's command on its command line and
// starts making the jail at once, outside the cgroups; its sandbox's first
// process is moved into the jail's cgroups and under the rlimits before
// the Run adopts it, and every process of the node runs there.
func TestPrewarmedNodeRunsInItsCgroups(t *testing.T) {
	s := newTestSandbox(t, Config{Limits: asleepLimits})
	if s.cgroups == nil {
		t.Skip("no writable cgroup v1 pids hierarchy here")
	}
	c, token := asleepInJail(t, s, "")
	prewarm(t, s, c)
	s.prewarm.mu.Lock()
	dirs := slices.Clone(s.prewarm.list[0].w.js.cg.dirs)
	s.prewarm.mu.Unlock()
	res, host, out := runAsleep(t, c, token)
	if !res.prewarmed {
		t.Fatalf("the node did not adopt its prewarmed jail:\n%s", out)
	}
	wantCgroups(t, s, host, dirs, "the prewarmed jail's")
	wantLimits(t, asleepLimits, out)
}

// A prewarmed jail's bwrap carries the node's environment as its own, as
// a cold start does, not on its command line, which any process on the
// host may read (/proc/PID/cmdline).
func TestPrewarmedEnvironmentNotOnTheCommandLine(t *testing.T) {
	s := newTestSandbox(t, Config{})
	ws := t.TempDir()
	secret := fmt.Sprintf("kilroy-secret-%d", os.Getpid())
	env := append(jailEnv(), "NODE_TOKEN="+secret)
	sp := prewarm(t, s, Cmd{Argv: []string{"true"}, Dir: ws, Env: env, Jail: &Jail{Sandbox: s, Workspace: ws}})
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", sp.pid))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cmdline), secret) {
		t.Errorf("the prewarmed bwrap's command line holds a value of the node's environment: %q", cmdline)
	}
	if !strings.Contains(string(cmdline), "\x00--\x00") {
		t.Errorf("the prewarmed bwrap's command line has no command: %q", cmdline)
	}
}
