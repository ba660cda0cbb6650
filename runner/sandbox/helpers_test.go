package sandbox

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// pollDeadline bounds every poll in these tests; they poll for state, not
// for time, so it only matters when something is broken.
const pollDeadline = 20 * time.Second

// testEnv is a minimal child environment: the PATH of the test process, so
// bash, sleep and cat are found.
func testEnv() []string {
	return []string{"PATH=" + HostEnv()["PATH"]}
}

// bash returns a Cmd running script with bash in a fresh directory.
func bash(t *testing.T, script string) Cmd {
	t.Helper()
	return Cmd{Argv: []string{"bash", "-c", script}, Dir: t.TempDir(), Env: testEnv()}
}

// alive reports whether pid is a live process. A zombie counts as dead: a
// killed orphan is reparented to pid 1, which in a container may never reap it.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return !os.IsNotExist(err)
	}
	// "pid (comm) S ...": the state follows the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(pollDeadline); alive(pid); {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still alive %v after Run returned", pid, pollDeadline)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// readPID polls for a file holding a pid and a newline.
func readPID(t *testing.T, path string) int {
	t.Helper()
	for deadline := time.Now().Add(pollDeadline); ; {
		b, err := os.ReadFile(path)
		if err == nil && bytes.HasSuffix(b, []byte("\n")) {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatalf("pid file %s: %v", path, err)
			}
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid file %s not written within %v", path, pollDeadline)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// combined is one buffer written through two distinct writers: a Run with
// them as Stdout and Stderr fits a spare jail, as one shared writer does
// not.
type combined struct {
	mu sync.Mutex
	b  bytes.Buffer
}

type combinedWriter struct{ c *combined }

func (w *combinedWriter) Write(p []byte) (int, error) {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	return w.c.b.Write(p)
}

func (c *combined) writers() (stdout, stderr io.Writer) {
	return &combinedWriter{c}, &combinedWriter{c}
}

func (c *combined) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.String()
}

// warm has s make its spare jails and waits until one is ready, so that
// the next jailed Run that fits one takes it. Where spares cannot work
// (no dash at /bin/sh), or after Close, it does nothing.
func warm(t *testing.T, s *Sandbox) {
	t.Helper()
	p := s.spares
	p.mu.Lock()
	closed := p.closed
	p.refillLocked()
	p.mu.Unlock()
	if !s.spareShell || closed {
		return
	}
	waitFor(t, "a spare jail ready", func() bool { return p.ready() > 0 })
}
