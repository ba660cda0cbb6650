package gitops

import (
	"strings"
	"testing"
)

// TestErrorPublic: what leaves the host names the git subcommand and git's
// verdict, never the argument list or the directories.
func TestErrorPublic(t *testing.T) {
	e := &Error{
		Argv:     []string{"/usr/bin/git", "-c", "core.hooksPath=/dev/null", "--git-dir=/srv/data/mirrors/o/r.git", "fetch", "origin"},
		Dir:      "/srv/data/mirrors/o/r.git",
		ExitCode: 128,
		Stderr:   "warning: something\nfatal: couldn't find remote ref refs/heads/release",
		shown:    3,
	}
	got := e.Public()
	if want := "git fetch exited 128: fatal: couldn't find remote ref refs/heads/release"; got != want {
		t.Errorf("Public() = %q, want %q", got, want)
	}
	if strings.Contains(got, "/srv/") {
		t.Errorf("Public() %q names a host path", got)
	}
	e.TimedOut = true
	if got := e.Public(); !strings.HasPrefix(got, "git fetch timed out") {
		t.Errorf("timed out: Public() = %q", got)
	}
}
