package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

// TestDiskGuardStopsTheLargestRun: below the reserve (here always: it is
// more inodes than any filesystem has free) the guard stops the run with
// the most inodes, with a cause naming the setting, and no other until
// that one has ended; then the next largest.
func TestDiskGuardStopsTheLargestRun(t *testing.T) {
	root := t.TempDir()
	g := newDiskGuard(root, DiskReserve{Inodes: 1 << 62}, slog.New(slog.DiscardHandler))
	causes := map[string]context.Context{}
	for name, files := range map[string]int{"small": 3, "large": 30} {
		dir := filepath.Join(root, name)
		for i := range files {
			if err := os.MkdirAll(filepath.Join(dir, fmt.Sprint(i)), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		ctx, stop := context.WithCancelCause(context.Background())
		causes[name] = ctx
		g.runs[name] = guardedRun{dir: dir, stop: stop} // as watch does, without its polling loop
	}
	stopped := func(name string) *DiskReserveError {
		de, _ := errors.AsType[*DiskReserveError](context.Cause(causes[name]))
		return de
	}
	g.check()
	if de := stopped("large"); de == nil || de.Setting != "sandbox.disk.reserve_inodes" {
		t.Fatalf("large run: cause %v, want a DiskReserveError naming sandbox.disk.reserve_inodes", context.Cause(causes["large"]))
	}
	g.check()
	if stopped("small") != nil {
		t.Fatal("the small run was stopped before the large one ended")
	}
	g.unregister("large")
	g.check()
	if stopped("small") == nil {
		t.Fatal("the small run was not stopped once the large one ended and the disk was still short")
	}
}
