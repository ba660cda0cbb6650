package image

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Two lock files per digest under <root>/.locks, both held with flock(2),
// which the kernel drops when a process dies, so a crash leaves nothing to
// clean up:
//
//   - <hex>.pull, exclusive: one puller per digest across the processes
//     (replicas) sharing the directory; Sweep takes it too.
//   - <hex>.use, shared by every Image handed out and not yet released;
//     Sweep removes an image only when it can take it exclusively.
//
// Inside one process, busy lets the goroutines that wait for a digest wake
// when the puller is done instead of polling the lock file.

// lockPoll is how often a blocked flock is retried; flock itself cannot be
// interrupted by a context.
const lockPoll = 20 * time.Millisecond

// lockPull holds the pull lock of a digest until the returned function runs.
func (s *Store) lockPull(ctx context.Context, hex string) (unlock func(), err error) {
	if err := s.claim(ctx, hex); err != nil {
		return nil, err
	}
	f, err := s.flock(ctx, hex+".pull", unix.LOCK_EX)
	if err != nil {
		s.unclaim(hex)
		return nil, err
	}
	return func() {
		f.Close()
		s.unclaim(hex)
	}, nil
}

// claim waits until no other goroutine of this process pulls the digest.
func (s *Store) claim(ctx context.Context, hex string) error {
	for {
		s.mu.Lock()
		done, busy := s.busy[hex]
		if !busy {
			s.busy[hex] = make(chan struct{})
			s.mu.Unlock()
			return nil
		}
		s.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return fmt.Errorf("image %s: waiting for another pull: %w", hex, ctx.Err())
		}
	}
}

func (s *Store) unclaim(hex string) {
	s.mu.Lock()
	close(s.busy[hex])
	delete(s.busy, hex)
	s.mu.Unlock()
}

// flock opens <root>/.locks/NAME and locks it (LOCK_SH or LOCK_EX),
// retrying until ctx is done.
func (s *Store) flock(ctx context.Context, name string, how int) (*os.File, error) {
	f, err := s.lockFile(name)
	if err != nil {
		return nil, err
	}
	for {
		err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		select {
		case <-time.After(lockPoll):
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", f.Name(), ctx.Err())
		}
	}
}

// tryLock takes the lock at once or reports false.
func (s *Store) tryLock(name string, how int) (*os.File, bool, error) {
	f, err := s.lockFile(name)
	if err != nil {
		return nil, false, err
	}
	if err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return f, true, nil
}

func (s *Store) lockFile(name string) (*os.File, error) {
	f, err := os.OpenFile(s.path(locksDir, name), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("image lock: %w", err)
	}
	return f, nil
}
