package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
)

// TestPublicReasonHidesDataDir: git's own message (a worktree a kill left
// locked) and other errors name paths in the data dir; what the checks
// show names none of them, through a symlinked data dir too.
func TestPublicReasonHidesDataDir(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "data")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	s := &Server{o: ServerOptions{DataDir: link}}
	wt := filepath.Join(real, "runs", "01RUN", "worktree")
	gitErr := &gitops.Error{Argv: []string{"worktree", "add"}, Dir: filepath.Join(link, "mirrors", "o", "r.git"), ExitCode: 128,
		Stderr: fmt.Sprintf("fatal: '%s' is a missing but locked worktree; use 'add -f -f' to override", wt)}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("prepare: %w", gitErr), "git worktree exited 128: fatal: '<data dir>/runs/01RUN/worktree' is a missing but locked worktree; use 'add -f -f' to override"},
		{errors.New("fatal: '" + wt + "' is a missing but locked worktree"), "fatal: '<data dir>/runs/01RUN/worktree' is a missing but locked worktree"},
		{fmt.Errorf("clear run directory: unlinkat %s: permission denied", filepath.Join(link, "runs", "x")), "clear run directory: unlinkat <data dir>/runs/x: permission denied"},
	} {
		got := s.publicReason(tc.err)
		if got != tc.want {
			t.Errorf("publicReason(%q)\n = %q\nwant %q", tc.err, got, tc.want)
		}
		if strings.Contains(got, real) || strings.Contains(got, link) {
			t.Errorf("publicReason names the data dir: %q", got)
		}
	}
}
