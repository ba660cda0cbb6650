package sandbox

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
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
// them as Stdout and Stderr can take a prewarmed jail, as one shared
// writer cannot.
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

// coldSandbox returns a Sandbox whose jailed Runs all start cold: closed,
// it prewarms nothing.
func coldSandbox(t *testing.T, cfg Config) *Sandbox {
	t.Helper()
	s := newTestSandbox(t, cfg)
	s.Close()
	return s
}

func sortedNUL(s string) string {
	f := strings.Split(strings.TrimSuffix(s, "\x00"), "\x00")
	slices.Sort(f)
	return "\x00" + strings.Join(f, "\x00") + "\x00"
}
