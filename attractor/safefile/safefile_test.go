package safefile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
)

// dir holds one of each kind of entry a node could leave in a worktree.
func dir(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(d, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", []byte("module example.com/m\n"))
	write("big", nil)
	if err := os.Truncate(filepath.Join(d, "big"), 1<<30); err != nil { // sparse: costs no disk
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"zero": "/dev/zero", "passwd": "/etc/passwd", "up": "../x", "beside": "go.mod",
	} {
		if err := os.Symlink(target, filepath.Join(d, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(d, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(d, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestReadIn(t *testing.T) {
	d := dir(t)
	tests := []struct {
		name string
		want string
		err  error // errors.Is; nil for success
		any  bool  // any error will do (os.Root's "escapes from parent")
	}{
		{name: "go.mod", want: "module example.com/m\n"},
		{name: "beside", want: "module example.com/m\n"},
		{name: "zero", any: true},
		{name: "passwd", any: true},
		{name: "up", any: true},
		{name: "../etc/passwd", any: true},
		{name: "fifo", err: safefile.ErrNotRegular},
		{name: "sub", err: safefile.ErrNotRegular},
		{name: "big", err: safefile.ErrTooLarge},
		{name: "missing", err: fs.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := withDeadline(t, func() ([]byte, error) { return safefile.ReadIn(d, tt.name, 1<<20) })
			switch {
			case tt.want != "" && err != nil:
				t.Fatalf("ReadIn: %v", err)
			case tt.want != "":
				if diff := cmp.Diff(string(got), tt.want); diff != "" {
					t.Errorf("content (-got +want):\n%s", diff)
				}
			case err == nil:
				t.Fatalf("ReadIn read %d bytes, want an error", len(got))
			case tt.err != nil && !errors.Is(err, tt.err):
				t.Errorf("ReadIn: %v, want %v", err, tt.err)
			}
		})
	}
}

// withDeadline fails the test if read blocks: a FIFO must not hang it.
func withDeadline(t *testing.T, read func() ([]byte, error)) ([]byte, error) {
	t.Helper()
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := read()
		done <- result{b, err}
	}()
	select {
	case r := <-done:
		return r.b, r.err
	case <-time.After(10 * time.Second):
		t.Fatal("the read blocked")
		return nil, nil
	}
}

func TestTooLargeNamesTheFile(t *testing.T) {
	_, err := safefile.ReadIn(dir(t), "big", 1<<20)
	var tl *safefile.TooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("ReadIn: %v, want a *TooLargeError", err)
	}
	if diff := cmp.Diff(*tl, safefile.TooLargeError{Name: "big", Size: 1 << 30, Max: 1 << 20}); diff != "" {
		t.Errorf("error (-got +want):\n%s", diff)
	}
}

func TestTailPath(t *testing.T) {
	d := dir(t)
	got, err := safefile.TailPath(filepath.Join(d, "go.mod"), 8)
	if err != nil {
		t.Fatalf("TailPath: %v", err)
	}
	if diff := cmp.Diff(string(got), "e.com/m\n"); diff != "" {
		t.Errorf("tail (-got +want):\n%s", diff)
	}
	for _, name := range []string{"zero", "fifo"} {
		if _, err := withDeadline(t, func() ([]byte, error) { return safefile.TailPath(filepath.Join(d, name), 8) }); err == nil {
			t.Errorf("TailPath(%s): no error", name)
		}
	}
}

// TestWriteFileReplacesLinks: a link or FIFO at the path is replaced, and
// the file it pointed at is left alone.
func TestWriteFileReplacesLinks(t *testing.T) {
	d := dir(t)
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(d, "out")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"out", "fifo", "zero", "go.mod"} {
		if _, err := withDeadline(t, func() ([]byte, error) {
			return nil, safefile.WriteFile(filepath.Join(d, name), []byte("new"))
		}); err != nil {
			t.Fatalf("WriteFile(%s): %v", name, err)
		}
		got, err := safefile.ReadIn(d, name, 1<<10)
		if err != nil || string(got) != "new" {
			t.Errorf("%s after WriteFile: %q, %v; want \"new\"", name, got, err)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the link's target was written: %q", b)
	}
}
