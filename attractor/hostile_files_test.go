package attractor

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runOneWithin runs node as runOne does and fails the test if the run does
// not end within a minute: a read that blocks on a FIFO must not hang it.
func runOneWithin(t *testing.T, h *harness, node string) Outcome {
	t.Helper()
	done := make(chan Outcome, 1)
	go func() {
		o, _ := runOne(t, h, node)
		done <- o
	}()
	select {
	case o := <-done:
		return o
	case <-time.After(time.Minute):
		t.Fatal("the run hung")
		return Outcome{}
	}
}

// TestVerifyHostileGoMod: whatever a pull request puts at go.mod (a link
// to /dev/zero or out of the worktree, a FIFO, a huge sparse file), the
// verify handler's read of it neither hangs nor loads it: `echo ok` passes.
func TestVerifyHostileGoMod(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(path string) error
	}{
		{"link to /dev/zero", func(p string) error { return os.Symlink("/dev/zero", p) }},
		{"link out of the worktree", func(p string) error { return os.Symlink("/etc/passwd", p) }},
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
		{"huge sparse file", func(p string) error {
			if err := os.WriteFile(p, []byte("module example.test/m\n"), 0o644); err != nil {
				return err
			}
			return os.Truncate(p, 8<<30)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			if err := tc.make(filepath.Join(h.workspace, "go.mod")); err != nil {
				t.Fatal(err)
			}
			got := runOneWithin(t, h, `v [shape=octagon, command="echo ok"]`)
			if got.Status != StatusSuccess || len(got.Findings) != 0 {
				t.Errorf("outcome %s %q with %d findings, want success", got.Status, got.FailureReason, len(got.Findings))
			}
		})
	}
}

// TestHostileStatusFile: a node that puts a link to /dev/zero, a FIFO or a
// huge file at its status path fails with a reason naming the status file,
// and no server path; the run does not hang or load the file.
func TestHostileStatusFile(t *testing.T) {
	for _, tc := range []struct {
		name, cmd, want string
	}{
		{"primary: link to /dev/zero", `ln -s /dev/zero "$KILROY_STAGE_STATUS_PATH"`, "status.json"},
		{"primary: fifo", `mkfifo "$KILROY_STAGE_STATUS_PATH"`, "status.json: not a regular file"},
		{"primary: huge file", `truncate -s 2G "$KILROY_STAGE_STATUS_PATH"`, "status.json is 2147483648 bytes, over the 1048576-byte limit"},
		{"fallback: link to /dev/zero", `ln -s /dev/zero "$KILROY_STAGE_STATUS_FALLBACK_PATH"`, ".kilroy-status.json"},
		{"fallback: fifo", `mkfifo "$KILROY_STAGE_STATUS_FALLBACK_PATH"`, ".kilroy-status.json: not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			got := runOneWithin(t, h, `t [shape=parallelogram, tool_command="`+strings.ReplaceAll(tc.cmd, `"`, `\"`)+`"]`)
			if got.Status != StatusFail || !strings.Contains(got.FailureReason, tc.want) {
				t.Errorf("outcome %s %q, want fail naming %q", got.Status, got.FailureReason, tc.want)
			}
			for _, dir := range []string{h.runDir, h.workspace} {
				if strings.Contains(got.FailureReason, dir) {
					t.Errorf("the reason %q names a server path (%s)", got.FailureReason, dir)
				}
			}
		})
	}
}
