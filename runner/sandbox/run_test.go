package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestRunExit(t *testing.T) {
	tests := []struct {
		script string
		want   Result
	}{
		{"true", Result{ExitCode: 0}},
		{"false", Result{ExitCode: 1}},
		{"exit 7", Result{ExitCode: 7}},
		{"kill -TERM $$", Result{ExitCode: -1, Signal: syscall.SIGTERM}},
		{"kill -KILL $$", Result{ExitCode: -1, Signal: syscall.SIGKILL}},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			got, err := Run(t.Context(), bash(t, tt.script))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(got, tt.want, cmpopts.IgnoreFields(Result{}, "Duration"), cmpopts.IgnoreUnexported(Result{})); diff != "" {
				t.Errorf("Run(%q) (-got +want):\n%s", tt.script, diff)
			}
		})
	}
}

func TestRunOutput(t *testing.T) {
	out, errOut := NewTail(1024), NewTail(1024)
	c := bash(t, `echo "$1 to out"; echo "$1 to err" >&2`)
	c.Argv = append(c.Argv, "script", "hello")
	c.Stdout, c.Stderr = out, errOut
	if _, err := Run(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	if got, want := string(out.Bytes()), "hello to out\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	if got, want := string(errOut.Bytes()), "hello to err\n"; got != want {
		t.Errorf("stderr = %q, want %q", got, want)
	}
}

// One writer for both streams keeps the order the child wrote in.
func TestRunSharedWriterKeepsOrder(t *testing.T) {
	both := NewTail(1024)
	c := bash(t, `for i in 1 2 3; do echo out$i; echo err$i >&2; done`)
	c.Stdout, c.Stderr = both, both
	if _, err := Run(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	want := "out1\nerr1\nout2\nerr2\nout3\nerr3\n"
	if got := string(both.Bytes()); got != want {
		t.Errorf("output = %q, want %q", got, want)
	}
}

func TestRunStdinEmpty(t *testing.T) {
	c := bash(t, `readlink /proc/self/fd/0; cat`)
	out := NewTail(1024)
	c.Stdout = out
	// If stdin were inherited, cat could wait for a terminal or pipe; the
	// timeout turns that into a failure rather than a hang.
	c.Timeout = time.Minute
	res, err := Run(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.TimedOut {
		t.Fatalf("Run = %+v, want a clean exit", res)
	}
	if got, want := string(out.Bytes()), os.DevNull+"\n"; got != want {
		t.Errorf("child's stdin = %q, want %q", got, want)
	}
}

func TestRunStdinGiven(t *testing.T) {
	c := bash(t, `tr a-z A-Z`)
	c.Stdin = strings.NewReader("shout\n")
	out := NewTail(1024)
	c.Stdout = out
	if _, err := Run(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	if got := string(out.Bytes()); got != "SHOUT\n" {
		t.Errorf("output = %q, want %q", got, "SHOUT\n")
	}
}

// A timeout kills the whole tree: the background sleep (a grandchild of
// Run) is gone once Run returns.
func TestRunTimeoutKillsGroup(t *testing.T) {
	c := bash(t, `sleep 300 & echo $! > pid; sleep 300`)
	c.Timeout = 2 * time.Second // ample for bash to write the pid file
	res, err := Run(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.Canceled || res.Signal != syscall.SIGTERM || res.ExitCode != -1 {
		t.Errorf("Run = %+v, want TimedOut by SIGTERM", res)
	}
	waitGone(t, readPID(t, filepath.Join(c.Dir, "pid")))
}

func TestRunCancelKillsGroup(t *testing.T) {
	c := bash(t, `sleep 300 & echo $! > pid; wait`)
	ctx, cancel := context.WithCancel(t.Context())
	pidc := make(chan int, 1)
	go func() {
		defer cancel()
		pidc <- readPID(t, filepath.Join(c.Dir, "pid"))
	}()
	res, err := Run(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Canceled || res.TimedOut || res.ExitCode != -1 {
		t.Errorf("Run = %+v, want Canceled", res)
	}
	waitGone(t, <-pidc)
}

// A group that ignores SIGTERM gets SIGKILL after KillGrace.
func TestRunKillGraceEscalates(t *testing.T) {
	c := bash(t, `trap "" TERM; sleep 300 & echo $! > pid; wait`)
	c.KillGrace = 100 * time.Millisecond
	ctx, cancel := context.WithCancel(t.Context())
	pidc := make(chan int, 1)
	go func() {
		defer cancel()
		pidc <- readPID(t, filepath.Join(c.Dir, "pid"))
	}()
	res, err := Run(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Canceled || res.Signal != syscall.SIGKILL {
		t.Errorf("Run = %+v, want Canceled by SIGKILL", res)
	}
	waitGone(t, <-pidc)
}

// A daemonised grandchild that keeps stdout open must not hang Run: Run
// returns WaitDelay after bash exits, with the output so far, and the
// grandchild is killed with the group.
func TestRunDaemonHoldingStdout(t *testing.T) {
	c := bash(t, `(sleep 300 & echo $! > pid); echo hi`)
	out := NewTail(1024)
	c.Stdout = out
	c.WaitDelay = 200 * time.Millisecond
	type ran struct {
		res Result
		err error
	}
	done := make(chan ran, 1)
	go func() {
		res, err := Run(t.Context(), c)
		done <- ran{res, err}
	}()
	var r ran
	select {
	case r = <-done:
	case <-time.After(pollDeadline):
		t.Fatalf("Run still waiting %v after bash exited; WaitDelay is %v", pollDeadline, c.WaitDelay)
	}
	res, err := r.res, r.err
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.TimedOut || !res.Lingered {
		t.Errorf("Run = %+v, want exit 0, Lingered", res)
	}
	if got := string(out.Bytes()); got != "hi\n" {
		t.Errorf("output = %q, want %q", got, "hi\n")
	}
	waitGone(t, readPID(t, filepath.Join(c.Dir, "pid")))
}

// With a file as stdout there is no pipe to wait for; leftovers of the group
// are killed all the same.
func TestRunKillsLeftoversAfterExit(t *testing.T) {
	c := bash(t, `(sleep 300 & echo $! > pid); echo hi`)
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c.Stdout = f
	res, err := Run(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.Lingered {
		t.Errorf("Run = %+v, want exit 0, not Lingered", res)
	}
	waitGone(t, readPID(t, filepath.Join(c.Dir, "pid")))
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// A writer that fails is reported, but the child is not killed by SIGPIPE:
// its output is drained and it exits on its own.
func TestRunWriterError(t *testing.T) {
	c := bash(t, `for i in $(seq 1000); do echo line $i; done; exit 3`)
	c.Stdout = failingWriter{}
	res, err := Run(t.Context(), c)
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("err = %v, want the writer's error", err)
	}
	if res.ExitCode != 3 {
		t.Errorf("ExitCode = %d, want 3", res.ExitCode)
	}
}

func TestRunAlreadyCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	dir := t.TempDir()
	c := bash(t, `touch started`)
	c.Dir = dir
	res, err := Run(ctx, c)
	if !errors.Is(err, context.Canceled) || !res.Canceled {
		t.Errorf("Run = %+v, %v; want Canceled and context.Canceled", res, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "started")); err == nil {
		t.Error("the process ran")
	}
}

func TestRunStartErrors(t *testing.T) {
	c := bash(t, "true")
	c.Dir = filepath.Join(t.TempDir(), "missing")
	if _, err := Run(t.Context(), c); err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("missing Dir: err = %v, want a start error that is not ErrNotFound", err)
	}
	if _, err := Run(t.Context(), Cmd{}); err == nil {
		t.Error("empty Argv: err = nil")
	}
}
