package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A Sandbox of one run (a local `kilroy-bot run`) starts pasta for its
// self-test and for the one spare the run takes, and no more; a server's
// makes the next spare as soon as a run took the last. Counted by a
// pasta that logs each start and runs the real one.
func TestOneRunMakesOneSpare(t *testing.T) {
	pasta, err := findTool("", "pasta", HostEnv()["PATH"], "")
	if err != nil {
		t.Skip("no pasta here: " + PastaFix)
	}
	for _, tc := range []struct {
		oneRun bool
		want   int // pastas started: the self-test's, the spare, the next spare
	}{{true, 2}, {false, 3}} {
		dir := t.TempDir()
		log := filepath.Join(dir, "starts")
		wrapper := filepath.Join(dir, "pasta")
		if err := os.WriteFile(wrapper, []byte("#!/bin/sh\necho start >> "+log+"\nexec "+pasta+" \"$@\"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		s := newTestSandbox(t, Config{Network: NetworkPublic, Pasta: wrapper, OneRun: tc.oneRun})
		p := s.nets
		spareReady := func() bool {
			deadline := time.Now().Add(30 * time.Second)
			for time.Now().Before(deadline) {
				p.mu.Lock()
				ready, making := p.spare != nil, p.making
				p.mu.Unlock()
				if ready || !making {
					return ready
				}
				time.Sleep(5 * time.Millisecond)
			}
			t.Fatal("the spare took over 30 s")
			return false
		}
		if !spareReady() {
			t.Fatalf("one run %v: no spare after the self-test", tc.oneRun)
		}
		j := &Jail{Sandbox: s, Workspace: t.TempDir(), Run: "the-run"}
		if res, err := Run(context.Background(), Cmd{Argv: []string{"true"}, Env: jailEnv(), Jail: j}); err != nil || res.ExitCode != 0 {
			t.Fatalf("one run %v: the run's jail: %+v, %v", tc.oneRun, res, err)
		}
		if got := spareReady(); got == tc.oneRun {
			t.Errorf("one run %v: a spare after the run took one: %v", tc.oneRun, got)
		}
		data, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(data), "start"); n != tc.want {
			t.Errorf("one run %v: pasta started %d times, want %d", tc.oneRun, n, tc.want)
		}
	}
}
