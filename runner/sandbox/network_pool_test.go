package sandbox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A Sandbox of one run (a local `kilroy-bot run`) starts one pasta: the
// run's jails join the namespace its self-test checked, whatever their
// run. A server's Sandbox makes the next spare as soon as a run takes
// the last: four pastas for the self-test and two runs. Close ends them
// all before it returns.
// Counted by a pasta that logs its pid and runs the real one.
func TestOneRunHasOneNamespace(t *testing.T) {
	for _, tc := range []struct {
		oneRun bool
		want   int // pastas started
	}{{true, 1}, {false, 4}} {
		s, pidsOf := loggedPastaSandbox(t, tc.oneRun)
		p := s.nets
		spareReady := func() bool { // once no spare is being made
			p.mu.Lock()
			making := p.making
			p.mu.Unlock()
			if making != nil {
				select {
				case <-making:
				case <-time.After(30 * time.Second):
					t.Fatal("the spare took over 30 s")
				}
			}
			p.mu.Lock()
			defer p.mu.Unlock()
			return p.spare != nil
		}
		if got := spareReady(); got == tc.oneRun {
			t.Errorf("one run %v: a spare after the self-test: %v", tc.oneRun, got)
		}
		netns := map[string]bool{}
		for _, run := range []string{"the-run", "the-run", "another"} {
			var out bytes.Buffer
			j := &Jail{Sandbox: s, Workspace: t.TempDir(), Run: run}
			if res, err := Run(context.Background(), Cmd{Argv: []string{"readlink", "/proc/self/ns/net"}, Env: jailEnv(),
				Stdout: &out, Stderr: &out, Jail: j}); err != nil || res.ExitCode != 0 {
				t.Fatalf("one run %v: a jail of %s: %+v, %v: %s", tc.oneRun, run, res, err, out.String())
			}
			netns[strings.TrimSpace(out.String())] = true
		}
		if want := map[bool]int{true: 1, false: 2}[tc.oneRun]; len(netns) != want {
			t.Errorf("one run %v: the jails were in %d network namespaces %v, want %d", tc.oneRun, len(netns), netns, want)
		}
		if !tc.oneRun {
			spareReady()
		}
		s.Close()
		pids := pidsOf()
		if len(pids) != tc.want {
			t.Errorf("one run %v: pasta started %d times, want %d", tc.oneRun, len(pids), tc.want)
		}
		for _, pid := range pids {
			if _, err := os.Stat("/proc/" + pid); err == nil {
				t.Errorf("one run %v: pasta %s is still there after Close", tc.oneRun, pid)
			}
		}
	}
}

// CloseAtExit, a local run's last step, kills the run's pasta without
// waiting for it: it ends all the same.
func TestCloseAtExitKillsPasta(t *testing.T) {
	s, pidsOf := loggedPastaSandbox(t, true)
	j := &Jail{Sandbox: s, Workspace: t.TempDir(), Run: "the-run"}
	if res, err := Run(context.Background(), Cmd{Argv: []string{"true"}, Env: jailEnv(), Jail: j}); err != nil || res.ExitCode != 0 {
		t.Fatalf("the run's jail: %+v, %v", res, err)
	}
	s.nets.mu.Lock()
	ns := s.nets.nets[""].ns // a pool of one run keys every jail so
	s.nets.mu.Unlock()
	s.CloseAtExit()
	if pids := pidsOf(); len(pids) != 1 {
		t.Fatalf("pasta started %d times, want 1", len(pids))
	}
	// Without CloseAtExit it would live netIdle (30 s) more.
	select {
	case <-ns.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("pasta is still there 10 s after CloseAtExit")
	}
}

// loggedPastaSandbox is a self-tested Sandbox with network public whose
// pasta is a script that logs its pid and runs the real one; pidsOf reads
// the pids logged so far. It skips where there is no pasta.
func loggedPastaSandbox(t *testing.T, oneRun bool) (s *Sandbox, pidsOf func() []string) {
	t.Helper()
	pasta, err := findTool("", "pasta", HostEnv()["PATH"], "")
	if err != nil {
		t.Skip("no pasta here: " + PastaFix)
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "pids")
	wrapper := filepath.Join(dir, "pasta")
	if err := os.WriteFile(wrapper, []byte("#!/bin/sh\necho $$ >> "+log+"\nexec "+pasta+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err = New(Config{Network: NetworkPublic, PATH: HostEnv()["PATH"], StateDir: t.TempDir(), Pasta: wrapper, OneRun: oneRun})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := s.SelfTest(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, func() []string {
		data, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Fields(string(data))
	}
}
