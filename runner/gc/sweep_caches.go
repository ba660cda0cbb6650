package gc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/kilroy-bot/kilroy-bot/runner/caches"
)

// sweepCaches removes the repositories' caches under caches/ that no run
// used for Retention.Caches, or that grew past Retention.CacheBytes. A
// cache a run holds (caches.Open) is skipped: its run may be reading it.
func sweepCaches(o SweepOptions, res *Swept) error {
	root := filepath.Join(o.DataDir, "caches")
	// Every layout has the lock three levels down (runner/caches); a node
	// writes only below cache/, a level deeper, so no file of its own
	// matches.
	locks, err := filepath.Glob(filepath.Join(root, "*", "*", "*", caches.LockName))
	if err != nil {
		return fmt.Errorf("gc: caches: %w", err)
	}
	now := o.Now()
	for _, l := range locks {
		dir := filepath.Dir(l)
		rel, _ := filepath.Rel(root, dir)
		gone, err := sweepCache(o, dir, now)
		switch {
		case err != nil:
			res.Failed = append(res.Failed, fmt.Errorf("caches %s: %w", rel, err))
		case gone:
			res.Caches = append(res.Caches, rel)
		}
	}
	return nil
}

// sweepCache removes dir's caches when they expired or are over the cap
// and no run holds them; gone says it did (or would, in a dry run).
func sweepCache(o SweepOptions, dir string, now time.Time) (gone bool, err error) {
	unlock, ok, err := caches.TryLock(dir)
	if err != nil || !ok {
		return false, err
	}
	defer unlock()
	last, err := caches.LastUse(dir)
	if err != nil {
		return false, err
	}
	if !expired(last, now, o.Retention.Caches, false) && !overCap(caches.Bound(dir), o.Retention.CacheBytes) {
		return false, nil
	}
	if o.DryRun {
		return true, nil
	}
	// The cache first, the lock last: a run that opens the caches now
	// waits on the lock, then finds it removed and makes new ones.
	if err := os.RemoveAll(caches.Bound(dir)); err != nil {
		return false, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return false, err
	}
	return true, nil
}

// overCap reports whether the regular files under dir hold more than max
// bytes (0: no cap). Links are not followed.
func overCap(dir string, max int64) bool {
	if max <= 0 {
		return false
	}
	var total int64
	over := errors.New("over the cap")
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable: counts as nothing
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			total += fi.Size()
		}
		if total > max {
			return over
		}
		return nil
	})
	return err == over
}
