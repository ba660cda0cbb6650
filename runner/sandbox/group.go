package sandbox

import (
	"context"
	"syscall"
	"time"
)

// stopGroupOn stops the process group pgid if ctx ends before exited is
// closed: SIGTERM first so tools can clean up (remove lock files, flush
// logs), SIGKILL after grace for those that ignore it. The returned channel
// yields ctx's error if ctx fired first, nil otherwise, and only once the
// watcher is done, so no signal is sent after Run has returned.
func stopGroupOn(ctx context.Context, pgid int, grace time.Duration, exited <-chan struct{}) <-chan error {
	cause := make(chan error, 1)
	go func() {
		select {
		case <-exited:
			cause <- nil
			return
		case <-ctx.Done():
		}
		signalGroup(pgid, syscall.SIGTERM)
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-exited:
		case <-t.C:
			signalGroup(pgid, syscall.SIGKILL)
		}
		cause <- ctx.Err()
	}()
	return cause
}

// signalGroup sends sig to every process of the group.
func signalGroup(pgid int, sig syscall.Signal) {
	// Errors are ignored on purpose: ESRCH means the group is already
	// empty, the normal case after a clean exit; EPERM means a member
	// changed credentials (setuid) and is beyond reach either way.
	_ = syscall.Kill(-pgid, sig)
}
