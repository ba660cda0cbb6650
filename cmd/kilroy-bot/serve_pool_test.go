package main

import (
	"testing"

	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

// A pooled worktree is only as clean as its index, which a node can write
// when there is no sandbox: serve then keeps no pool.
func TestWorktreePoolNeedsTheSandbox(t *testing.T) {
	for _, sandboxed := range []bool{true, false} {
		dir := t.TempDir()
		pool, err := newWorktreePool(dir, sandbox.HostEnv(), sandboxed)
		if err != nil {
			t.Fatal(err)
		}
		if got := pool != nil; got != sandboxed {
			t.Errorf("sandboxed=%v: a pool: %v, want %v", sandboxed, got, sandboxed)
		}
	}
}
