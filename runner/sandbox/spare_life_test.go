package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// spareBotEnv makes the test binary a bot that makes one spare, prints its
// pid and cgroup directories, and waits to be killed (TestMain).
const spareBotEnv = "KILROY_TEST_SPARE_BOT_STATE"

func TestMain(m *testing.M) {
	if dir := os.Getenv(spareBotEnv); dir != "" {
		os.Exit(spareBot(dir))
	}
	os.Exit(m.Run())
}

func spareBot(stateDir string) int {
	s, err := New(Config{PATH: HostEnv()["PATH"], StateDir: stateDir})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	sp, err := s.makeSpare()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(sp.cmd.Process.Pid, strings.Join(sp.js.cg.dirs, " "))
	io.Copy(io.Discard, os.Stdin) // until the test kills us, or dies itself
	return 0
}

// A spare whose bot dies ends: the options pipe reaches EOF, bwrap exits
// without running anything, and the next Sandbox removes its cgroups.
func TestSpareEndsWithTheBot(t *testing.T) {
	spareSandbox(t, Config{}) // skips where spares cannot work
	bot := exec.Command(os.Args[0])
	bot.Env = []string{spareBotEnv + "=" + filepath.Join(os.TempDir(), "kilroy-sandbox-test-state"), "PATH=" + HostEnv()["PATH"]}
	bot.Stderr = os.Stderr
	stdin, _ := bot.StdinPipe()
	stdout, _ := bot.StdoutPipe()
	if err := bot.Start(); err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		bot.Wait()
		t.Fatalf("the bot made no spare: %v", err)
	}
	fields := strings.Fields(line)
	pid, _ := strconv.Atoi(fields[0])
	if !alive(pid) {
		t.Fatalf("the spare %d is not running before its bot dies", pid)
	}
	bot.Process.Kill()
	bot.Wait()
	waitGone(t, pid)
	if r := findCgroupRoot(Limits{}); r != nil {
		for _, d := range fields[1:] {
			waitFor(t, "the dead bot's spare cgroup removed", func() bool { _, err := os.Stat(d); return os.IsNotExist(err) })
		}
	}
}

// Options cut short (a bot that died while writing them) run nothing:
// the command is the last option, and its script is a syntax error
// unless it is complete.
func TestSpareCutShortRunsNothing(t *testing.T) {
	s := spareSandbox(t, Config{})
	ws := t.TempDir()
	marker := filepath.Join(ws, "ran")
	touch, err := LookPath(jailEnv(), "touch")
	if err != nil {
		t.Skip(err)
	}
	// Cut after the marker, the command would still make it, but for the
	// braces around the script.
	c := Cmd{Argv: []string{touch, marker, filepath.Join(ws, "second")}, Dir: ws, Env: jailEnv()}
	opts, err := (&Jail{Sandbox: s, Workspace: ws}).options(c.Env, c.Dir, touch)
	if err != nil {
		t.Fatal(err)
	}
	full, ok := s.spareOptions(c, c.Argv, opts)
	if !ok {
		t.Fatal("the command does not fit a spare")
	}
	var b []byte
	for _, o := range full {
		b = append(append(b, o...), 0)
	}
	last := len(b) - len(full[len(full)-1]) - 1 // where the script starts
	afterMarker := bytes.LastIndex(b, []byte(" '"+c.Argv[2]+"'"))
	for _, tt := range []struct {
		name string
		n    int
		ran  bool
	}{
		{"complete", len(b), true},
		{"without the final NUL", len(b) - 1, true},
		{"without the closing brace", len(b) - 2, false},
		{"after an argument", afterMarker, false},
		{"half the script", last + (len(b)-last)/2, false},
		{"no script", last, false},
		{"no command variable", last - len(spareVar) - 1 - len("--setenv") - 1, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(marker)
			exit := runSpareRaw(t, s, b[:tt.n])
			_, err := os.Stat(marker)
			if ran := err == nil; ran != tt.ran {
				t.Errorf("the command ran: %v, want %v (exit %d)", ran, tt.ran, exit)
			}
		})
	}
}

// runSpareRaw hands a fresh spare the bytes opts, releases it as Run
// does, and returns its exit code.
func runSpareRaw(t *testing.T, s *Sandbox, opts []byte) int {
	t.Helper()
	sp, err := s.makeSpare()
	if err != nil {
		t.Fatal(err)
	}
	defer sp.js.cg.remove()
	_, err = sp.args.Write(opts)
	sp.args.Close()
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, sp.stdout)
	go io.Copy(io.Discard, sp.stderr)
	if err := sp.js.release(); err != nil && err != errNoSandbox {
		signalGroup(sp.cmd.Process.Pid, syscall.SIGKILL)
		t.Errorf("release: %v", err)
	}
	sp.cmd.Wait()
	sp.stdout.Close()
	sp.stderr.Close()
	return sp.cmd.ProcessState.ExitCode()
}

// Close kills and reaps every spare and removes its cgroups before it
// returns; the Sandbox then runs nodes cold and makes no spare again.
func TestSandboxCloseEndsSpares(t *testing.T) {
	s := spareSandbox(t, Config{})
	warm(t, s)
	waitFor(t, "every spare made", func() bool { return s.spares.ready() == spareJails })
	spares := sparesOf(s)
	s.Close()
	for _, sp := range spares {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", sp.pid)); err == nil {
			t.Errorf("spare %d still there (running or a zombie) after Close", sp.pid)
		}
		for _, d := range sp.dirs {
			if _, err := os.Stat(d); err == nil {
				t.Errorf("spare cgroup %s still there after Close", d)
			}
		}
	}
	ws := t.TempDir()
	res, out := runOut(t, Cmd{Argv: []string{"echo", "after close"}, Dir: ws, Env: jailEnv(), Jail: &Jail{Sandbox: s, Workspace: ws}})
	if res.ExitCode != 0 || res.spare || out != "after close\n" {
		t.Errorf("a Run after Close: exit %d, from a spare %v, output %q; want a cold start that works", res.ExitCode, res.spare, out)
	}
	s.spares.mu.Lock()
	filling := s.spares.filling
	s.spares.mu.Unlock()
	if n := s.spares.ready(); n != 0 || filling {
		t.Errorf("after Close: %d spares ready, filling %v; want none made", n, filling)
	}
}

// Spares that no Run takes for the pool's idle time end by themselves.
func TestSpareIdleEnds(t *testing.T) {
	s := spareSandbox(t, Config{})
	s.spares.idle = 300 * time.Millisecond // before any spare is made
	warm(t, s)
	spares := sparesOf(s)
	waitFor(t, "idle spares ended", func() bool { return s.spares.ready() == 0 })
	for _, sp := range spares {
		waitFor(t, "an idle spare reaped", func() bool {
			_, err := os.Stat(fmt.Sprintf("/proc/%d", sp.pid))
			return os.IsNotExist(err)
		})
		for _, d := range sp.dirs {
			waitFor(t, "an idle spare's cgroup removed", func() bool { _, err := os.Stat(d); return os.IsNotExist(err) })
		}
	}
}

// A spare killed while idle costs its Run nothing but the cold start, and
// is reaped.
func TestSpareKilledWhileIdle(t *testing.T) {
	s := spareSandbox(t, Config{})
	warm(t, s)
	pid := sparesOf(s)[0].pid
	syscall.Kill(pid, syscall.SIGKILL)
	waitFor(t, "the spare dead", func() bool { return !alive(pid) })
	ws := t.TempDir()
	res, out := runOut(t, Cmd{Argv: []string{"echo", "cold"}, Dir: ws, Env: jailEnv(), Jail: &Jail{Sandbox: s, Workspace: ws}})
	if res.ExitCode != 0 || res.spare || out != "cold\n" {
		t.Errorf("exit %d, from a spare %v, output %q; want a cold start that works", res.ExitCode, res.spare, out)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
		t.Errorf("the killed spare %d was not reaped", pid)
	}
}

// Nodes that start at once each get their own jail, spare or cold, and
// their own output.
func TestSpareConcurrentRuns(t *testing.T) {
	s := spareSandbox(t, Config{})
	warm(t, s)
	const n = 12
	var wg sync.WaitGroup
	spares := make(chan bool, n)
	for i := range n {
		wg.Go(func() {
			ws := t.TempDir()
			var out combined
			stdout, stderr := out.writers()
			res, err := Run(context.Background(), Cmd{Argv: []string{"sh", "-c", `echo "out $1"; echo "err $1" >&2; exit $1`, "sh", strconv.Itoa(i)},
				Dir: ws, Env: jailEnv(), Jail: &Jail{Sandbox: s, Workspace: ws}, Stdout: stdout, Stderr: stderr})
			// Two pipes: the lines may arrive in either order.
			want := fmt.Sprintf("out %d\nerr %d\n", i, i)
			if got := out.String(); got == fmt.Sprintf("err %d\nout %d\n", i, i) {
				want = got
			}
			if err != nil || res.ExitCode != i || out.String() != want {
				t.Errorf("node %d: %v, exit %d, output %q; want exit %d, %q", i, err, res.ExitCode, out.String(), i, want)
			}
			spares <- res.spare
		})
	}
	wg.Wait()
	close(spares)
	used := 0
	for sp := range spares {
		if sp {
			used++
		}
	}
	if used == 0 {
		t.Errorf("no node of %d took a spare", n)
	}
}
