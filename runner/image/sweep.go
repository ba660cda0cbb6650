package image

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// tmpGrace spares a temporary directory that its creator has made but not
// yet locked.
const tmpGrace = time.Minute

// Sweep removes the images no one has leased (Ensure without Release, in
// any process sharing the directory) and none has used for olderThan, and
// what pulls that died left in the temporary directory. It returns the
// digests removed.
func (s *Store) Sweep(ctx context.Context, olderThan time.Duration) ([]string, error) {
	entries, err := os.ReadDir(s.root)
	if err != nil {
		return nil, fmt.Errorf("image sweep: %w", err)
	}
	var removed []string
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return removed, err
		}
		if !e.IsDir() || !hexName(e.Name()) || !olderEntry(e, olderThan) {
			continue
		}
		ok, err := s.sweepImage(e.Name())
		if err != nil {
			return removed, fmt.Errorf("image sweep: %w", err)
		}
		if ok {
			removed = append(removed, "sha256:"+e.Name())
		}
	}
	return removed, s.sweepTmp()
}

func olderEntry(e os.DirEntry, age time.Duration) bool {
	info, err := e.Info()
	return err == nil && time.Since(info.ModTime()) >= age
}

// sweepImage removes one image if neither a pull nor a lease holds it: it
// moves out of place by one rename under both locks, then goes.
func (s *Store) sweepImage(hex string) (bool, error) {
	pull, ok, err := s.tryLock(hex+".pull", unix.LOCK_EX)
	if !ok {
		return false, err
	}
	defer pull.Close()
	use, ok, err := s.tryLock(hex+".use", unix.LOCK_EX)
	if !ok {
		return false, err
	}
	trash, lock, err := s.tempDir("sweep.")
	if err != nil {
		use.Close()
		return false, err
	}
	defer lock.Close()
	err = os.Rename(s.path(hex), filepath.Join(trash, hex))
	use.Close()
	if rerr := removeTree(trash); err == nil {
		err = rerr
	}
	return err == nil, err
}

// sweepTmp removes the temporary directories no live process holds.
func (s *Store) sweepTmp() error {
	entries, err := os.ReadDir(s.path(tmpDir))
	if err != nil {
		return fmt.Errorf("image sweep: %w", err)
	}
	for _, e := range entries {
		if !olderEntry(e, tmpGrace) {
			continue
		}
		dir := s.path(tmpDir, e.Name())
		f, err := os.OpenFile(dir, os.O_RDONLY|unix.O_NOFOLLOW, 0)
		if err != nil {
			continue
		}
		if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
			err = removeTree(dir)
		}
		f.Close()
		if err != nil {
			return fmt.Errorf("image sweep: %w", err)
		}
	}
	return nil
}
