package gc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
)

// mirrorState is what the sweep learned of one mirror under its lock.
type mirrorState struct {
	branches  []gitops.RunBranchRef
	active    map[string]bool // run ids of its branches the queue calls active
	committed map[string]time.Time
	lastUse   time.Time
	deleted   int // branches deleted
}

// sweepMirror deletes a mirror's expired run branches (and, opted in,
// those on its remote), then the mirror itself when nobody used it for
// the window, or else collects it so the deleted branches' objects go.
// It holds the mirror's lock throughout. Its error is the queue's.
func sweepMirror(ctx context.Context, o SweepOptions, m mirror, res *Swept) error {
	defer o.LockMirror(m.dir)()
	st, err := readMirror(ctx, o, m)
	if errors.Is(err, errQueue) {
		return err // nothing is deleted while the queue cannot say what is active
	}
	if err != nil {
		res.Failed = append(res.Failed, fmt.Errorf("mirror %s: %w", m.repo, err))
		return nil
	}
	now := o.Now()
	for _, b := range st.branches {
		id, created, _ := branchRunID(b.Branch)
		if !expired(later(created, b.Committed), now, o.Retention.Branches, st.active[id]) {
			continue
		}
		if o.DryRun {
			res.Branches = append(res.Branches, m.repo+" "+b.Branch)
			continue
		}
		deleted, err := o.Git.DeleteRunBranch(ctx, m.dir, b.Branch)
		if err != nil {
			res.Failed = append(res.Failed, fmt.Errorf("mirror %s: %w", m.repo, err))
			continue
		}
		if deleted {
			st.deleted++
			res.Branches = append(res.Branches, m.repo+" "+b.Branch)
		}
	}
	if o.Remote != nil && o.Retention.RemoteBranches > 0 {
		if err := sweepRemote(ctx, o, m, st, res); err != nil {
			res.Failed = append(res.Failed, fmt.Errorf("remote of %s: %w", m.repo, err))
		}
	}
	return finishMirror(ctx, o, m, st, res)
}

// errQueue marks the queue's failure to answer.
var errQueue = errors.New("gc: the queue cannot say which runs are active")

// readMirror lists a mirror's run branches and asks the queue about their
// runs; a queue failure wraps errQueue.
func readMirror(ctx context.Context, o SweepOptions, m mirror) (*mirrorState, error) {
	refs, err := o.Git.RunBranches(ctx, m.dir)
	if err != nil {
		return nil, err
	}
	st := &mirrorState{lastUse: mirrorLastUse(m.dir), committed: map[string]time.Time{}}
	var ids []string
	for _, b := range refs {
		id, created, ok := branchRunID(b.Branch)
		if !ok {
			continue // not a name the bot gives: never touched
		}
		st.branches = append(st.branches, b)
		st.committed[b.Branch] = b.Committed
		st.lastUse = later(st.lastUse, later(created, b.Committed))
		ids = append(ids, id)
	}
	if st.active, err = o.Queue.Active(ctx, ids); err != nil {
		return nil, fmt.Errorf("%w: runs of %s: %w", errQueue, m.repo, err)
	}
	return st, nil
}

// finishMirror deletes the mirror when it expired, else collects it when
// branches went.
func finishMirror(ctx context.Context, o SweepOptions, m mirror, st *mirrorState, res *Swept) error {
	if o.Unpark != nil && !o.DryRun && (st.deleted > 0 || expired(st.lastUse, o.Now(), o.Retention.Mirrors, anyActive(st))) {
		o.Unpark(ctx, m.dir)
	}
	trees, err := o.Git.LinkedWorktrees(ctx, m.dir)
	if err != nil {
		res.Failed = append(res.Failed, fmt.Errorf("mirror %s: %w", m.repo, err))
		return nil
	}
	inUse := len(trees) > 0 || anyActive(st)
	if expired(st.lastUse, o.Now(), o.Retention.Mirrors, inUse) {
		if o.DryRun {
			res.Mirrors = append(res.Mirrors, m.repo)
			return nil
		}
		if err := os.RemoveAll(m.dir); err != nil {
			res.Failed = append(res.Failed, fmt.Errorf("mirror %s: %w", m.repo, err))
			return nil
		}
		_ = os.Remove(filepath.Dir(m.dir)) // the owner's directory, when it was the last
		res.Mirrors = append(res.Mirrors, m.repo)
		return nil
	}
	if st.deleted == 0 || o.DryRun {
		return nil
	}
	if err := o.Git.CollectMirror(ctx, m.dir, pruneExpire(o, len(trees))); err != nil {
		res.Failed = append(res.Failed, fmt.Errorf("mirror %s: %w", m.repo, err))
		return nil
	}
	res.Collected = append(res.Collected, m.repo)
	return nil
}

// anyActive says whether the queue calls a run of the mirror's active.
func anyActive(st *mirrorState) bool {
	for _, a := range st.active {
		if a {
			return true
		}
	}
	return false
}

// pruneExpire is how old an unreachable object must be for the collection
// to delete it. Every object of a deleted branch goes at once only while
// nothing can be writing objects: the server's lock is held and no
// worktree exists (a run's node may write objects it references later).
// Otherwise git's two weeks (with worktrees) or an hour (no worktree, but
// a server in another process may be fetching).
func pruneExpire(o SweepOptions, worktrees int) time.Duration {
	switch {
	case worktrees > 0:
		return 14 * 24 * time.Hour
	case o.lockedByServer:
		return 0
	default:
		return unlockedPruneExpire
	}
}

// sweepRemote deletes the expired run branches on the mirror's remote,
// through the remote git of its installation. A branch's age there is
// since its run started (its id's time) or its last checkpoint, when the
// mirror still has it.
func sweepRemote(ctx context.Context, o SweepOptions, m mirror, st *mirrorState, res *Swept) error {
	info, _, ok := mirrorInfo(m.dir)
	if !ok || info.CloneURL == "" || info.Repo == "" {
		return nil // the server never recorded where its remote is
	}
	git, done, err := o.Remote(ctx, info)
	if err != nil {
		return err
	}
	defer done()
	refs, err := git.RemoteRunBranches(ctx, m.dir, info.CloneURL)
	if err != nil {
		return err
	}
	var ids []string
	for _, r := range refs {
		if id, _, ok := branchRunID(r.Branch); ok {
			ids = append(ids, id)
		}
	}
	active, err := o.Queue.Active(ctx, ids)
	if err != nil {
		return err
	}
	now := o.Now()
	for _, r := range refs {
		id, created, ok := branchRunID(r.Branch)
		if !ok || !expired(later(created, st.committed[r.Branch]), now, o.Retention.RemoteBranches, active[id]) {
			continue
		}
		if o.DryRun {
			res.RemoteBranches = append(res.RemoteBranches, m.repo+" "+r.Branch)
			continue
		}
		if err := git.DeleteRemoteRunBranch(ctx, m.dir, info.CloneURL, r.Branch, r.SHA); err != nil {
			res.Failed = append(res.Failed, err)
			continue
		}
		res.RemoteBranches = append(res.RemoteBranches, m.repo+" "+r.Branch)
	}
	return nil
}
