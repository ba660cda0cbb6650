package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// raceStarts is how many jails start while the link flips. On the code
// that checked for planted links and then handed bubblewrap paths, every
// run of the test saw the host in a few of them (about one in three).
const raceStarts = 60

// A node of a parallel branch flips a directory under a shared cache (a
// PATH entry there, GOPATH/bin) between a real directory and a relative
// link that leads out of the cache, while other jails start. No jail may
// show what the link leads to: a directory standing for the host's root
// with a canary in it, or the host's real root, where a canary file of
// the test's own sits in the host's /tmp (the jail's /tmp is its own).
func TestJailPlantedLinkRace(t *testing.T) {
	for _, tt := range []struct {
		name string
		// up is the link's target, relative to the cache, and shown the
		// host directory where the canary is looked for below it.
		up func(cache, root string) string
	}{
		{"to a directory standing for the host's root", func(cache, root string) string {
			rel, err := filepath.Rel(cache, root)
			if err != nil {
				t.Fatal(err)
			}
			return rel
		}},
		{"to the host's root", func(cache, _ string) string {
			return strings.Repeat("../", strings.Count(cache, "/")+2)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir() // the host's root, or where its canary is
			canary := filepath.Join(root, "canary")
			if err := os.WriteFile(canary, []byte("HOST-CANARY\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			cache := filepath.Join(t.TempDir(), "a", "b", "gopath")
			bin := filepath.Join(cache, "bin")
			if err := os.MkdirAll(bin, 0o755); err != nil {
				t.Fatal(err)
			}
			up := tt.up(cache, root)
			// Where the canary would show: below the PATH entry, or at
			// its own path, as bubblewrap resolves the mount point
			// through the link too. Below "/" the canary is at its host
			// path.
			var seen []string
			for _, at := range []string{bin, root, "/"} {
				if tt.name == "to the host's root" {
					seen = append(seen, filepath.Join(at, canary))
				} else {
					seen = append(seen, filepath.Join(at, "canary"))
				}
			}
			stop := flipLink(t, bin, up)
			defer stop()
			ws := t.TempDir()
			env := []string{"PATH=" + HostEnv()["PATH"] + ":" + bin}
			script := `for f in "$@"; do cat "$f" 2>/dev/null; done; echo ran`
			ran, failed := 0, 0
			for i := range raceStarts {
				// A Sandbox of its own for each start: what one learnt of
				// a path holds for a few seconds (pathCache), and a bot
				// starts jails for longer than that.
				j := &Jail{Sandbox: newTestSandbox(t, Config{}), Workspace: ws, Caches: cache}
				c := Cmd{Argv: append([]string{"/bin/sh", "-c", script, "sh"}, seen...), Dir: ws, Env: env, Jail: j}
				if i%2 == 1 {
					Prewarm(c) // a prewarmed jail plans now and mounts a moment later
				}
				var out combined
				c.Stdout, c.Stderr = out.writers()
				res, err := Run(context.Background(), c)
				got := out.String()
				if strings.Contains(got, "HOST-CANARY") {
					t.Fatalf("start %d of %d shows the host through the flipped link (prewarmed %v):\n%s", i+1, raceStarts, res.prewarmed, got)
				}
				if err != nil || res.ExitCode != 0 || !strings.Contains(got, "ran") {
					failed++
					continue
				}
				ran++
			}
			stop()
			// A start may fail when bubblewrap notices the race; most must run.
			if ran < raceStarts/2 {
				t.Errorf("%d of %d starts ran, %d failed: the race left too few to show anything", ran, raceStarts, failed)
			}
			t.Logf("%d starts ran, %d failed", ran, failed)
		})
	}
}

// flipLink has a goroutine swap dir with a link to target (renameat2's
// exchange: dir is always one or the other) until stop is called; what
// dir held is kept.
func flipLink(t *testing.T, dir, target string) (stop func()) {
	t.Helper()
	link := dir + ".link"
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !done.Load() {
			unix.Renameat2(unix.AT_FDCWD, dir, unix.AT_FDCWD, link, unix.RENAME_EXCHANGE)
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			done.Store(true)
			wg.Wait()
			if fi, err := os.Lstat(dir); err == nil && fi.Mode()&os.ModeSymlink != 0 {
				unix.Renameat2(unix.AT_FDCWD, dir, unix.AT_FDCWD, link, unix.RENAME_EXCHANGE)
			}
		})
	}
}
