package runpage

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestTailSkipsFIFO: a FIFO a node left in its stage directory reads as
// missing, at once, instead of blocking the page until a writer comes.
func TestTailSkipsFIFO(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "status.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	done := make(chan error, 1)
	go func() {
		_, _, err := tail(root, "status.json", maxStatus)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("tail of a FIFO: %v, want fs.ErrNotExist", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("tail blocked on a FIFO")
	}
}
