package deploy

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// strayWait bounds the wait for the container's PID 1 to reap what the
// sandbox's jails left to it: a real init does so at once.
const strayWait = 10 * time.Second

// proc is one process as /proc/PID/stat tells it.
type proc struct {
	PID, PPID int
	State     string
	Comm      string
}

func (p proc) String() string {
	return fmt.Sprintf("pid %d (%s) state %s parent %d", p.PID, p.Comm, p.State, p.PPID)
}

// parseStat reads the concatenated /proc/PID/stat lines of a process
// table. The command name sits in parentheses and may itself hold spaces
// and parentheses, so the fields after it are found from the last ')'.
func parseStat(out string) ([]proc, error) {
	var ps []proc
	for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		open, end := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
		if open < 0 || end < open {
			return nil, fmt.Errorf("/proc stat line %q has no (comm)", line)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(line[:open]))
		rest := strings.Fields(line[end+1:])
		if err != nil || len(rest) < 2 {
			return nil, fmt.Errorf("/proc stat line %q: want PID (COMM) STATE PPID ...", line)
		}
		ppid, err := strconv.Atoi(rest[1])
		if err != nil {
			return nil, fmt.Errorf("/proc stat line %q: parent %q: %w", line, rest[1], err)
		}
		ps = append(ps, proc{PID: pid, PPID: ppid, State: rest[0], Comm: line[open+1 : end]})
	}
	return ps, nil
}

// strays are the processes a container's PID 1 has not dealt with:
// zombies, and orphans that PID 1 inherited other than the bot itself
// (which is PID 1's child under an init). bubblewrap's inner init is such
// an orphan from the moment its outer bwrap exits, before it exits too:
// counting it makes the check independent of when it does, so a PID 1
// that never reaps is caught even before its first zombie appears.
func strays(ps []proc) []proc {
	var out []proc
	for _, p := range ps {
		if p.State == "Z" || (p.PPID == 1 && p.Comm != "kilroy-bot") {
			out = append(out, p)
		}
	}
	return out
}

func TestParseStatAndStrays(t *testing.T) {
	for _, tc := range []struct {
		name, stat   string
		procs, stray []proc
	}{
		{
			name:  "bot as PID 1, a zombie bwrap and one in flight",
			stat:  "1 (kilroy-bot) S 0 1 1 0 -1\n40 (bwrap) Z 1 40 1 0 -1\n41 (bwrap) S 1 40 1 0 -1\n",
			procs: []proc{{1, 0, "S", "kilroy-bot"}, {40, 1, "Z", "bwrap"}, {41, 1, "S", "bwrap"}},
			stray: []proc{{40, 1, "Z", "bwrap"}, {41, 1, "S", "bwrap"}},
		},
		{
			name:  "tini as PID 1, the bot its child, a spare jail the bot's",
			stat:  "1 (tini) S 0 1 1 0 -1\n7 (kilroy-bot) S 1 7 1 0 -1\n50 (bwrap) S 7 50 1 0 -1\n51 (bwrap) S 50 50 1 0 -1\n",
			procs: []proc{{1, 0, "S", "tini"}, {7, 1, "S", "kilroy-bot"}, {50, 7, "S", "bwrap"}, {51, 50, "S", "bwrap"}},
		},
		{
			name:  "a command name with spaces and parentheses",
			stat:  "9 (a) b (c) R 3 9 1 0 -1\n",
			procs: []proc{{9, 3, "R", "a) b (c"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps, err := parseStat(tc.stat)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(ps, tc.procs); diff != "" {
				t.Errorf("parseStat (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(strays(ps), tc.stray); diff != "" {
				t.Errorf("strays (-got +want):\n%s", diff)
			}
		})
	}
}

func TestParseStatRejectsGarbage(t *testing.T) {
	for _, stat := range []string{"no parentheses here", "x (sh) S 1", "5 (sh) S", "5 (sh) S one"} {
		if ps, err := parseStat(stat); err == nil {
			t.Errorf("parseStat(%q) = %v, want an error", stat, ps)
		}
	}
}

// waitNoStrays polls the process table of container name, read through
// its own /proc with the image's sh and cat, until it holds no stray
// (see strays), and fails t if that does not happen within strayWait.
func waitNoStrays(t *testing.T, eng, name string) {
	t.Helper()
	deadline := time.Now().Add(strayWait)
	for {
		// Processes that end between the glob and cat are skipped.
		out := run(t, eng, "exec", name, "sh", "-c", "cat /proc/[0-9]*/stat 2>/dev/null; exit 0")
		ps, err := parseStat(out)
		if err != nil {
			t.Fatal(err)
		}
		left := strays(ps)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("the container's PID 1 left processes unreaped for %s (the sandbox's bwrap leaves its inner init to it):\n%s",
				strayWait, procList(left))
			return
		}
		time.Sleep(100 * time.Millisecond) // polling another process table, not synchronising goroutines
	}
}

func procList(ps []proc) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "  %s\n", p)
	}
	return b.String()
}

// stopGracefully stops container name as its engine does on shutdown
// (SIGTERM to PID 1, SIGKILL after the timeout) and checks that serve got
// the signal and stopped by itself: exit status 0 and its last log line.
func stopGracefully(t *testing.T, eng, name string) {
	t.Helper()
	run(t, eng, "stop", "-t", "30", name)
	code := strings.TrimSpace(run(t, eng, "inspect", "--format", "{{.State.ExitCode}}", name))
	logs, _ := exec.Command(eng, "logs", name).CombinedOutput()
	if code != "0" || !strings.Contains(string(logs), "serve: stopped") {
		t.Errorf("%s stop: exit status %s, want 0 after serve's graceful shutdown (\"serve: stopped\"); logs:\n%s", eng, code, logs)
	}
}
