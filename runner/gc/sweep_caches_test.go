package gc_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/runner/caches"
	"github.com/kilroy-bot/kilroy-bot/runner/gc"
	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
)

// cacheAt makes the caches of one repository under dataDir, last used at
// used, holding size bytes.
func cacheAt(t *testing.T, dataDir string, inst int64, repo string, used time.Time, size int) string {
	t.Helper()
	dir := caches.Dir(filepath.Join(dataDir, "caches"), caches.ScopeRepository, inst, filepath.Dir(repo), filepath.Base(repo))
	release, err := caches.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	release()
	if err := os.WriteFile(filepath.Join(caches.Bound(dir), "gomodcache", "blob"), make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(dir, caches.LockName), used, used); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The sweep removes caches no run used within retention.caches and
// caches over the size cap, and never caches a run holds, however old or
// large; the rest stay.
func TestSweepCaches(t *testing.T) {
	g, err := gitops.New(gitops.Options{PATH: os.Getenv("PATH"), HomeDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	now := time.Now()
	fresh := cacheAt(t, data, 1, "octo/fresh", now.Add(-time.Hour), 10)
	stale := cacheAt(t, data, 1, "octo/stale", now.Add(-40*24*time.Hour), 10)
	big := cacheAt(t, data, 2, "acme/big", now.Add(-time.Hour), 5000)
	held := cacheAt(t, data, 2, "acme/held", now.Add(-40*24*time.Hour), 5000)
	release, err := caches.Open(held)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	os.Chtimes(filepath.Join(held, caches.LockName), now.Add(-40*24*time.Hour), now.Add(-40*24*time.Hour))

	ret := gc.DefaultRetention()
	ret.CacheBytes = 1000
	res, err := gc.Sweep(context.Background(), gc.SweepOptions{DataDir: data, Retention: ret, Queue: fakeQueue{}, Git: g})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(res.Caches)
	if want := []string{"1/octo/stale", "2/acme/big"}; !slices.Equal(res.Caches, want) || len(res.Failed) > 0 {
		t.Errorf("swept caches %v (failed %v), want %v", res.Caches, res.Failed, want)
	}
	for dir, want := range map[string]bool{fresh: true, stale: false, big: false, held: true} {
		if _, err := os.Stat(dir); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", dir, err == nil, want)
		}
	}
}
