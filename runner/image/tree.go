package image

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// tree is a directory being written from layers. Every operation starts
// from a parent directory opened beneath the root with no symbolic link
// followed (openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, or one
// O_NOFOLLOW openat per element where openat2 is missing), then acts on a
// single name inside it with the *at system calls, which do not follow a
// final link either. A link planted by one entry can therefore never carry
// a later write outside the tree, or anywhere else inside it.
type tree struct {
	openat2 bool

	rootDir *dirHandle

	// The parent directory of the last entry: layers list a directory's
	// entries together, so most entries reuse it. Forgotten whenever a
	// directory is removed.
	lastPath string
	last     *dirHandle
}

// dirHandle is a directory descriptor shared by the tree's cache and the
// file writers still using it: the last holder to let go closes it.
type dirHandle struct {
	fd   int
	refs atomic.Int32
}

func newDirHandle(fd int) *dirHandle {
	d := &dirHandle{fd: fd}
	d.refs.Store(1)
	return d
}

func (d *dirHandle) hold() *dirHandle {
	d.refs.Add(1)
	return d
}

func (d *dirHandle) release() {
	if d.refs.Add(-1) == 0 {
		unix.Close(d.fd)
	}
}

func openTree(dir string) (*tree, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	return &tree{rootDir: newDirHandle(fd), openat2: true}, nil
}

func (t *tree) close() {
	t.forget()
	t.rootDir.release()
}

func (t *tree) forget() {
	if t.last != nil {
		t.last.release()
	}
	t.last, t.lastPath = nil, ""
}

// dir returns the directory rel ("" is the root), creating missing ones
// when create is set. The descriptor is the tree's: do not close it, and
// do not use it after the next call.
func (t *tree) dir(rel string, create bool) (int, error) {
	d, err := t.handle(rel, create)
	if err != nil {
		return -1, err
	}
	return d.fd, nil
}

// handle is dir as the tree's shared handle: hold it to use the
// descriptor after the next call.
func (t *tree) handle(rel string, create bool) (*dirHandle, error) {
	if rel == "" {
		return t.rootDir, nil
	}
	if t.last != nil && t.lastPath == rel {
		return t.last, nil
	}
	fd, err := t.open(rel, create)
	if err != nil {
		return nil, err
	}
	t.forget()
	t.lastPath, t.last = rel, newDirHandle(fd)
	return t.last, nil
}

// open is dir with a descriptor the caller closes.
func (t *tree) open(rel string, create bool) (int, error) {
	if rel == "" {
		return unix.Dup(t.rootDir.fd)
	}
	if t.openat2 {
		fd, err := unix.Openat2(t.rootDir.fd, rel, &unix.OpenHow{
			Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV,
		})
		switch {
		case err == nil:
			return fd, nil
		case errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM):
			t.openat2 = false // an old kernel, or a seccomp filter that refuses it
		case errors.Is(err, unix.ENOENT) && create:
		default:
			return -1, pathError(rel, err)
		}
	}
	return t.walk(rel, create)
}

// walk opens rel one element at a time, refusing links.
func (t *tree) walk(rel string, create bool) (int, error) {
	fd, err := unix.Dup(t.rootDir.fd)
	if err != nil {
		return -1, err
	}
	done := ""
	for _, name := range strings.Split(rel, "/") {
		if create {
			if err := unix.Mkdirat(fd, name, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
				unix.Close(fd)
				return -1, pathError(join(done, name), err)
			}
		}
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		unix.Close(fd)
		if err != nil {
			return -1, pathError(join(done, name), err)
		}
		fd, done = next, join(done, name)
	}
	return fd, nil
}

// pathError says which kind of refusal an errno from resolving a
// directory is: a link or a non-directory on the way is ErrUnsafe.
func pathError(rel string, err error) error {
	switch {
	case errors.Is(err, unix.ELOOP):
		return fmt.Errorf("%w: %q is a symbolic link, not followed", ErrUnsafe, rel)
	case errors.Is(err, unix.ENOTDIR):
		return fmt.Errorf("%w: %q is not a directory", ErrUnsafe, rel)
	case errors.Is(err, unix.EXDEV):
		return fmt.Errorf("%w: %q leaves the tree", ErrUnsafe, rel)
	}
	return fmt.Errorf("%q: %w", rel, err)
}

// remove deletes name (the tree path rel) in the directory fd, a whole
// subtree if it is a directory; a missing name is no error.
func (t *tree) remove(fd int, name, rel string) error {
	err := unix.Unlinkat(fd, name, 0)
	if err == nil || errors.Is(err, unix.ENOENT) {
		return nil
	}
	if !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EPERM) {
		return err
	}
	if t.lastPath == rel || strings.HasPrefix(t.lastPath, rel+"/") {
		t.forget()
	}
	return removeDir(fd, name)
}

// removeDir deletes the directory name in fd and everything in it.
func removeDir(fd int, name string) error {
	unix.Fchmodat(fd, name, 0o700, 0) // a directory: so that one without permissions empties
	sub, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	names, err := readNames(sub)
	for _, n := range names {
		if err != nil {
			break
		}
		err = unix.Unlinkat(sub, n, 0)
		if errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EPERM) {
			err = removeDir(sub, n)
		}
	}
	unix.Close(sub)
	if err != nil {
		return err
	}
	return unix.Unlinkat(fd, name, unix.AT_REMOVEDIR)
}

// readNames lists a directory by descriptor, leaving the descriptor open.
func readNames(fd int) ([]string, error) {
	dup, err := unix.Dup(fd)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(dup), "")
	defer f.Close()
	return f.Readdirnames(-1)
}

// lstat is fstatat without following a final link; ok is false when the
// name does not exist.
func lstat(fd int, name string) (st unix.Stat_t, ok bool, err error) {
	err = unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, unix.ENOENT) {
		return st, false, nil
	}
	return st, err == nil, err
}

func isDir(st unix.Stat_t) bool { return st.Mode&unix.S_IFMT == unix.S_IFDIR }

// join joins relative tree paths.
func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// split is the parent and the last element of a relative tree path.
func split(rel string) (dir, name string) {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return "", rel
	}
	return rel[:i], rel[i+1:]
}
