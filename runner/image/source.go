package image

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"golang.org/x/sys/unix"
)

// source is an image to unpack.
type source struct {
	img v1.Image
	// configPinned: the Ref's digest names the config, not a manifest (a
	// docker archive has no manifest of its own; computing one would
	// compress every layer).
	configPinned bool
	cleanup      func()
}

// source opens the image a Ref pins: by digest from its registry, or from
// its local file or directory.
func (s *Store) source(ctx context.Context, ref Ref) (*source, error) {
	h, err := v1.NewHash(ref.Digest)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadReference, err)
	}
	noop := func() {}
	prefix, path, local := splitLocal(ref.Name)
	switch {
	case !local:
		r, err := s.parse(ref.Name)
		if err != nil {
			return nil, err
		}
		opts, err := s.remoteOptions(ctx)
		if err != nil {
			return nil, err
		}
		img, err := remote.Image(r.Context().Digest(h.String()), opts...)
		if err != nil {
			return nil, err
		}
		return &source{img: img, cleanup: noop}, nil
	case prefix == SourceDockerArchive:
		img, err := tarball.ImageFromPath(path, nil)
		if err != nil {
			return nil, err
		}
		return &source{img: img, configPinned: true, cleanup: noop}, nil
	case prefix == SourceOCI:
		img, err := layoutImage(path, h)
		if err != nil {
			return nil, err
		}
		return &source{img: img, cleanup: noop}, nil
	}
	dir, lock, err := s.extract(ctx, path)
	if err != nil {
		return nil, err
	}
	cleanup := func() {
		removeTree(dir)
		lock.Close()
	}
	img, err := layoutImage(dir, h)
	if err != nil {
		cleanup()
		return nil, err
	}
	return &source{img: img, cleanup: cleanup}, nil
}

func layoutImage(dir string, h v1.Hash) (v1.Image, error) {
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, err
	}
	return findImage(idx, h)
}

// withArchive runs fn on an oci-archive unpacked into a temporary
// directory.
func (s *Store) withArchive(ctx context.Context, path string, fn func(dir string) error) error {
	dir, lock, err := s.extract(ctx, path)
	if err != nil {
		return err
	}
	defer lock.Close()
	defer removeTree(dir)
	return fn(dir)
}

// extract unpacks an oci-archive (a tar of an OCI layout) with the rules
// of a layer, keeping only files and directories, since the layout is
// then read through paths. The caller removes the directory, then closes
// the lock.
func (s *Store) extract(ctx context.Context, path string) (string, *os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	dir, lock, err := s.tempDir("archive.")
	if err != nil {
		return "", nil, err
	}
	u, err := newUnpacker(dir, s.opts.MaxBytes)
	if err == nil {
		u.filesOnly = true
		err = u.layer(ctx, f)
		if err == nil {
			err = u.finish()
		}
		u.close()
	}
	if err != nil {
		removeTree(dir)
		lock.Close()
		return "", nil, fmt.Errorf("oci-archive %s: %w", path, err)
	}
	return dir, lock, nil
}

// tempDir makes a directory under <root>/.tmp and locks it, so that Sweep
// knows it is in use; an unlocked one was left by a process that died.
func (s *Store) tempDir(prefix string) (string, *os.File, error) {
	dir, err := os.MkdirTemp(s.path(tmpDir), prefix)
	if err != nil {
		return "", nil, fmt.Errorf("image store: %w", err)
	}
	lock, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err == nil {
		err = unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err != nil {
			lock.Close()
		}
	}
	if err != nil {
		os.Remove(dir)
		return "", nil, fmt.Errorf("image store: lock %s: %w", dir, err)
	}
	return dir, lock, nil
}

// removeTree removes a directory tree without following links, and
// whatever the modes inside it; a missing tree is no error.
func removeTree(dir string) error {
	parent, err := unix.Open(filepath.Dir(dir), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(parent)
	name := filepath.Base(dir)
	st, ok, err := lstat(parent, name)
	switch {
	case err != nil || !ok:
		return err
	case !isDir(st):
		return unix.Unlinkat(parent, name, 0)
	}
	return removeDir(parent, name)
}

// hexName reports whether a directory entry is an image's (64 hex digits).
func hexName(n string) bool {
	return len(n) == 64 && strings.Trim(n, "0123456789abcdef") == ""
}
