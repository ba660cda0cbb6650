package gitops

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// Mirror maintenance. Every git command of the bot runs with automatic gc
// and maintenance off (see hardening), so no command does surprise work in
// the middle of a run. A long-lived server's mirrors still need collecting:
// every fetch leaves loose objects (small fetches) or a pack (large ones),
// every checkpoint loose objects, every run a loose branch ref. So the
// server calls MaintainMirror after its fetches, under the lock those
// fetches and the worktree additions of its runs hold, and it collects
// only when git's own auto-gc thresholds say so.

// The thresholds are git's own defaults for gc.auto and gc.autoPackLimit,
// counted exactly with count-objects rather than estimated from one
// fan-out directory as `git gc --auto` does.
const (
	gcLooseLimit = 6700
	gcPackLimit  = 50
)

// gcPruneExpire is how old an unreachable object must be before gc deletes
// it: git's default (gc.pruneExpire), stated so no config can shorten it.
//
// Worktrees made from a mirror share its object store (`git worktree add`
// from the bare repository, no alternates). What a live worktree has
// committed is on its run branch, a ref of the mirror, and what it has
// staged is in its index; gc walks every linked worktree's HEAD and index
// as roots (git >= 2.15), so neither is at risk at any age. What is at risk
// is an object written but not referenced yet: the blobs and trees of a
// checkpoint commit in progress in another run's worktree, or objects a
// node's own git commands write. Those are young, and the grace period
// keeps every unreachable object younger than two weeks, far beyond any
// sane limits.run_timeout (60m by default), which bounds how long a run
// can hold such an object. Pruning at "now" would race those writers.
const gcPruneExpire = "2.weeks.ago"

// ObjectCounts is what `git count-objects -v` reports about a repository.
type ObjectCounts struct {
	Loose int // loose objects
	Packs int // pack files, cruft and kept packs included
}

// CountObjects counts the loose objects and packs of repository dir. It
// reads the object directories only, so it is cheap even on a big mirror.
func (g *Git) CountObjects(ctx context.Context, dir string) (ObjectCounts, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return ObjectCounts{}, fmt.Errorf("gitops: repository dir: %w", err)
	}
	out, err := g.runStr(ctx, call{dir: dir, readOnly: true, pinned: true,
		args: []string{"--git-dir=" + dir, "count-objects", "-v"}})
	if err != nil {
		return ObjectCounts{}, fmt.Errorf("gitops: count objects of %s: %w", dir, err)
	}
	return parseCountObjects(out)
}

// parseCountObjects reads the "key: value" lines of count-objects -v.
func parseCountObjects(out string) (ObjectCounts, error) {
	var c ObjectCounts
	for _, line := range strings.Split(out, "\n") {
		key, val, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		var dst *int
		switch key {
		case "count":
			dst = &c.Loose
		case "packs":
			dst = &c.Packs
		default:
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(val))
		if err != nil {
			return ObjectCounts{}, fmt.Errorf("gitops: count-objects: %q: %w", line, err)
		}
		*dst = n
	}
	return c, nil
}

// needsGC is git's auto-gc rule on exact counts.
func (c ObjectCounts) needsGC() bool {
	return c.Loose > gcLooseLimit || c.Packs > gcPackLimit
}

// Maintenance is what MaintainMirror found and did.
type Maintenance struct {
	Before    ObjectCounts
	Collected bool // gc ran
}

// MaintainMirror collects garbage in the bare mirror at dir when it has
// more loose objects or packs than git's auto-gc allows: `git gc` repacks
// everything reachable into one pack, packs the refs, expires reflogs and
// prunes unreachable objects older than gcPruneExpire (younger ones go
// into a cruft pack, not back to loose objects, so the next call does not
// find them over the limit again).
//
// The caller must hold the lock that serialises its fetches into the
// mirror and the creation of worktrees from it. gc itself is safe next to
// readers and writers in existing worktrees (that is how git's own
// background auto-gc runs), but a fetch or a new worktree racing its
// ref packing and repacking would be needless contention.
func (g *Git) MaintainMirror(ctx context.Context, dir string) (Maintenance, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return Maintenance{}, fmt.Errorf("gitops: mirror dir: %w", err)
	}
	defer g.mirrorLocks.lock(dir)()
	before, err := g.CountObjects(ctx, dir)
	if err != nil {
		return Maintenance{}, err
	}
	m := Maintenance{Before: before}
	if !before.needsGC() {
		return m, nil
	}
	_, err = g.run(ctx, call{dir: dir, pinned: true, args: []string{
		"--git-dir=" + dir, "-c", "gc.cruftPacks=true",
		"gc", "--quiet", "--prune=" + gcPruneExpire}})
	if err != nil {
		return m, fmt.Errorf("gitops: gc of mirror %s (%d loose objects, %d packs): %w", dir, before.Loose, before.Packs, err)
	}
	m.Collected = true
	return m, nil
}
