package caches

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

// Open makes the caches of dir ready for a run (cache/ with a directory
// per variable) and holds them for it: the sweep removes nothing of them
// until release. The lock's time records the use, at Open and at release.
func Open(dir string) (release func(), err error) {
	f, err := lockShared(dir)
	if err != nil {
		return nil, err
	}
	if err := sandbox.MakeCacheDirs(Bound(dir)); err != nil {
		unlock(f)
		return nil, fmt.Errorf("caches: %w", err)
	}
	return func() { unlock(f) }, nil
}

// lockShared takes dir's lock shared. A sweep may have removed the lock
// file it waited on: then it takes the new one.
func lockShared(dir string) (*os.File, error) {
	p := filepath.Join(dir, LockName)
	for {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("caches: %w", err)
		}
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
		if errors.Is(err, os.ErrNotExist) {
			continue // a sweep removed dir just now
		}
		if err != nil {
			return nil, fmt.Errorf("caches: %w", err)
		}
		if err := flock(f, syscall.LOCK_SH); err != nil {
			f.Close()
			return nil, fmt.Errorf("caches: lock %s: %w", p, err)
		}
		if sameFile(f, p) {
			touch(p)
			return f, nil
		}
		f.Close() // removed by a sweep while we waited
	}
}

// TryLock takes dir's lock exclusively if no run holds it; ok is false
// when one does, or when dir has no lock file (not a cache).
func TryLock(dir string) (unlock func(), ok bool, err error) {
	p := filepath.Join(dir, LockName)
	f, err := os.OpenFile(p, os.O_RDWR|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("caches: %w", err)
	}
	if err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("caches: lock %s: %w", p, err)
	}
	return func() { f.Close() }, true, nil
}

// LastUse is when dir's caches were last opened or released.
func LastUse(dir string) (time.Time, error) {
	fi, err := os.Lstat(filepath.Join(dir, LockName))
	if err != nil {
		return time.Time{}, err
	}
	return fi.ModTime(), nil
}

func unlock(f *os.File) {
	touch(f.Name())
	f.Close() // and with it the lock
}

func touch(p string) {
	now := time.Now()
	_ = os.Chtimes(p, now, now) // a failure only makes the caches look older
}

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// sameFile reports whether p is still the file f has open.
func sameFile(f *os.File, p string) bool {
	a, err1 := f.Stat()
	b, err2 := os.Lstat(p)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}
