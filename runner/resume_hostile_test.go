package runner

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestResumeHostileRunFiles: a node can reach its run directory, so it can
// leave a link to /dev/zero or a FIFO where checkpoint.json or graph.dot
// was. Resume then refuses the run with an error instead of hanging or
// filling memory.
func TestResumeHostileRunFiles(t *testing.T) {
	for _, tc := range []struct {
		name string
		file func(RunDir) string
		make func(path string) error
	}{
		{"checkpoint link to /dev/zero", RunDir.Checkpoint, func(p string) error { return os.Symlink("/dev/zero", p) }},
		{"checkpoint fifo", RunDir.Checkpoint, func(p string) error { return syscall.Mkfifo(p, 0o644) }},
		{"graph link to /dev/zero", RunDir.Graph, func(p string) error { return os.Symlink("/dev/zero", p) }},
		{"graph fifo", RunDir.Graph, func(p string) error { return syscall.Mkfifo(p, 0o644) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := newRepo(t, map[string]string{".kilroy/ci.dot": pipeline(`
  one [shape=parallelogram, tool_command="true"]
  start -> one -> exit`)})
			o := localOptions(t, repo)
			first := interruptedRun(t, o)
			path := tc.file(first.Dir)
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := tc.make(path); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := PrepareResume(context.Background(), string(first.Dir), o)
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, ErrUsage) {
					t.Errorf("PrepareResume = %v, want a usage error", err)
				}
			case <-time.After(time.Minute):
				t.Fatal("PrepareResume hung")
			}
		})
	}
}
