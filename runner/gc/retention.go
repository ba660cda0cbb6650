package gc

import (
	"path"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
)

// Retention is how long a server's data dir keeps what its runs leave
// (the server policy's `retention:`). A zero window keeps forever.
type Retention struct {
	// Runs: a finished run's directory (logs, stage directories, report,
	// checkpoint) after its last change.
	Runs time.Duration
	// Branches: a finished run's branch in the repository's mirror after
	// its last checkpoint.
	Branches time.Duration
	// RemoteBranches: a finished run's branch on the repository's remote
	// after the run started; zero (the default) never deletes there.
	RemoteBranches time.Duration
	// Mirrors: a mirror no run or event fetched into for this long, with
	// no active run and no worktree, is deleted.
	Mirrors time.Duration
	// Caches: a repository's caches (runner/caches) no run used for this
	// long are deleted.
	Caches time.Duration
	// CacheBytes: caches larger than this are deleted (the next run starts
	// them afresh); zero is no cap.
	CacheBytes int64
}

// The documented defaults of Retention.
const (
	DefaultRuns     = DefaultOlderThan
	DefaultBranches = DefaultOlderThan
	DefaultMirrors  = 30 * 24 * time.Hour
	DefaultCaches   = 30 * 24 * time.Hour
)

// DefaultRetention is what a server keeps without a `retention:` policy.
func DefaultRetention() Retention {
	return Retention{Runs: DefaultRuns, Branches: DefaultBranches, Mirrors: DefaultMirrors, Caches: DefaultCaches}
}

// expired is the one rule of every window: something no active run uses,
// last used longer ago than a non-zero window.
func expired(last, now time.Time, window time.Duration, active bool) bool {
	return !active && window > 0 && now.Sub(last) > window
}

// branchRunID is the run id of a run branch kilroy/run/<pipeline>/<run-id>,
// and its creation time from the ULID; ok is false for any other name,
// which the sweep never touches.
func branchRunID(branch string) (id string, created time.Time, ok bool) {
	rest, found := strings.CutPrefix(branch, "kilroy/run/")
	if !found || !strings.Contains(rest, "/") {
		return "", time.Time{}, false
	}
	id = path.Base(rest)
	if !isRunID(id) {
		return "", time.Time{}, false
	}
	return id, ulid.Time(ulid.MustParse(id).Time()), true
}

// later is the later of two times.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
