// Package safefile reads files that a pipeline's processes could have
// written, linked or replaced: anything in a worktree, and a run's stage
// directories, whose paths every node is told.
//
// The model. Such a file is untrusted input to the bot's own process, which
// runs every tenant's pipelines. Reading one must not follow a symlink out
// of its directory (`ln -s /dev/zero go.mod`, or a link to the host's
// files), must not block (a FIFO in its place), and must not load an
// unbounded amount (a sparse 10 GB file). So every read here goes through
// an os.Root for the directory the file is expected in, opens without
// blocking, accepts regular files only, and reads at most a cap given by
// the caller; a larger file is an error naming it, its size and the cap.
// Errors name the file relative to its directory, never by its full path:
// they end up in check runs, where the server's paths have no place.
//
// It lives under attractor because attractor is the lowest package that
// reads such files (verify findings, status files) and imports nothing of
// ours outside its own tree (DESIGN §1); runner, runner/agent and runpage use
// it too, so that there is one way to do this.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ErrNotRegular is the refusal of a directory, device, FIFO or socket.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is matched (errors.Is) by every *TooLargeError.
var ErrTooLarge = errors.New("file too large")

// TooLargeError is a file over the caller's cap.
type TooLargeError struct {
	Name string
	Size int64
	Max  int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is %d bytes, over the %d-byte limit", e.Name, e.Size, e.Max)
}

func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// Open opens name in root for reading. It fails for a path that leaves
// root (through ".." or a symlink), and with ErrNotRegular for anything but
// a regular file, without blocking on a FIFO.
func Open(root *os.Root, name string) (*os.File, fs.FileInfo, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("stat %s: %w", name, err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, &fs.PathError{Op: "open", Path: name, Err: ErrNotRegular}
	}
	return f, st, nil
}

// ReadFile reads name in root, at most max bytes; a larger file is a
// *TooLargeError.
func ReadFile(root *os.Root, name string, max int64) ([]byte, error) {
	f, st, err := Open(root, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > max {
		return nil, &TooLargeError{Name: name, Size: st.Size(), Max: max}
	}
	// The file may grow while it is read: one byte past the cap says so.
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if int64(len(b)) > max {
		return nil, &TooLargeError{Name: name, Size: int64(len(b)), Max: max}
	}
	return b, nil
}

// ReadIn reads name (a path relative to dir) inside dir: see ReadFile.
func ReadIn(dir, name string, max int64) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return ReadFile(root, name, max)
}

// Tail reads at most the last n bytes of name in root; cut is how many
// bytes before them were left out.
func Tail(root *os.Root, name string, n int64) (data []byte, cut int64, err error) {
	f, st, err := Open(root, name)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	if size := st.Size(); size > n {
		cut = size - n
		if _, err := f.Seek(cut, io.SeekStart); err != nil {
			return nil, 0, fmt.Errorf("seek %s: %w", name, err)
		}
	}
	data, err = io.ReadAll(io.LimitReader(f, n))
	if err != nil {
		return nil, 0, fmt.Errorf("read %s: %w", name, err)
	}
	return data, cut, nil
}

// TailPath is Tail for the file at path within its own directory: a
// symlink in its place is followed only to a file beside it.
func TailPath(path string, n int64) ([]byte, error) {
	root, err := os.OpenRoot(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	defer root.Close()
	b, _, err := Tail(root, filepath.Base(path), n)
	return b, err
}
