// Package wtpool keeps warm worktrees: the worktree of a pull request run
// that ended is parked instead of deleted, and the next run of the same
// repository takes it and moves it to its own commit, writing only the
// files that differ, instead of checking out every file again.
//
// The model. A pool is a directory (<data-dir>/pool, on the filesystem of
// the run directories, since worktrees move by rename) and, in memory,
// the parked worktrees of each repository in the order they were parked.
// Put parks a worktree (gitops.ParkWorktree: moved into the pool, its
// registration locked, cleaned and checked out at the run's start
// commit); Take hands the most recently parked worktree of the repository
// to a new run (gitops.ReuseWorktree: moved to the run directory, cleaned
// again, reset to the run's commit on the run's branch). Both clean, so
// that a worktree is never handed out with anything of its earlier run
// in it; what cannot be made clean with certainty is removed instead
// (gitops.ErrNotReusable) and the run makes a fresh worktree.
//
// Bounds: at most PerRepo worktrees of a repository and Total in all;
// parking past a bound removes the least recently parked. A worktree
// parked for longer than Idle is removed. Take removes what it takes from
// the pool before working on it, so two runs of one repository never get
// the same worktree. The pool lives in memory: New removes whatever an
// earlier process left in its directory.
package wtpool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
)

// Defaults of Options.
const (
	DefaultPerRepo = 2
	DefaultTotal   = 16
	DefaultIdle    = time.Hour
)

// expireTimeout bounds the removal of a worktree that sat idle.
const expireTimeout = 5 * time.Minute

// ErrEmpty is Take's error when the repository has no parked worktree.
var ErrEmpty = errors.New("wtpool: no warm worktree of the repository")

// Options configure a Pool.
type Options struct {
	// Dir holds the parked worktrees; on the filesystem of the run
	// directories. Created when missing; emptied by New.
	Dir string
	// Git parks, reuses and removes worktrees.
	Git *gitops.Git
	// PerRepo and Total bound the parked worktrees of one repository and
	// of all; zero means DefaultPerRepo and DefaultTotal.
	PerRepo, Total int
	// Idle is how long a worktree stays parked unused; zero means
	// DefaultIdle.
	Idle time.Duration
}

// Pool is a set of parked worktrees. It is safe for concurrent use.
type Pool struct {
	o Options

	mu     sync.Mutex
	parked []*parked // least recently parked first
	seq    int
}

type parked struct {
	repo  string
	dir   string
	timer *time.Timer
}

// New makes the pool directory, removing worktrees an earlier process
// parked there (their registrations are unlocked, so git prunes them).
func New(o Options) (*Pool, error) {
	if o.Dir == "" || o.Git == nil {
		return nil, errors.New("wtpool: Options.Dir and Options.Git are required")
	}
	o.PerRepo = orDefault(o.PerRepo, DefaultPerRepo)
	o.Total = orDefault(o.Total, DefaultTotal)
	if o.Idle <= 0 {
		o.Idle = DefaultIdle
	}
	abs, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("wtpool: %w", err)
	}
	o.Dir = abs
	if err := clearLeftovers(abs); err != nil {
		return nil, err
	}
	return &Pool{o: o}, nil
}

func orDefault(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}

// Put parks the worktree of repoDir at worktree (a run's, ended), checked
// out at the commit at. A worktree that cannot be parked is removed, and
// the error says why. Parking past a bound removes the least recently
// parked worktree.
func (p *Pool) Put(ctx context.Context, repoDir, worktree, at string) error {
	p.mu.Lock()
	p.seq++
	dir := filepath.Join(p.o.Dir, strconv.Itoa(p.seq))
	p.mu.Unlock()
	if err := p.o.Git.ParkWorktree(ctx, repoDir, worktree, dir, at); err != nil {
		return errors.Join(err, p.discard(ctx, repoDir, worktree, dir))
	}
	e := &parked{repo: repoDir, dir: dir}
	p.mu.Lock()
	p.parked = append(p.parked, e)
	evicted := p.overBounds(repoDir)
	e.timer = time.AfterFunc(p.o.Idle, func() { p.expire(e) })
	p.mu.Unlock()
	var errs []error
	for _, old := range evicted {
		errs = append(errs, p.discard(ctx, old.repo, old.dir))
	}
	return errors.Join(errs...)
}

// overBounds takes out of the pool what exceeds its bounds after a Put to
// repo, least recently parked first. The caller holds p.mu.
func (p *Pool) overBounds(repo string) []*parked {
	var out []*parked
	n := 0
	for _, e := range p.parked {
		if e.repo == repo {
			n++
		}
	}
	for i := 0; i < len(p.parked); {
		e := p.parked[i]
		over := len(p.parked) > p.o.Total || (e.repo == repo && n > p.o.PerRepo)
		if !over {
			i++
			continue
		}
		if e.repo == repo {
			n--
		}
		p.drop(i)
		out = append(out, e)
	}
	return out
}

// drop removes entry i from the pool. The caller holds p.mu.
func (p *Pool) drop(i int) {
	if t := p.parked[i].timer; t != nil {
		t.Stop()
	}
	p.parked = append(p.parked[:i], p.parked[i+1:]...)
}

// Take makes worktree a checkout of startSHA on branch from the most
// recently parked worktree of repoDir. ErrEmpty means there was none; any
// other error means the one taken could not be made clean and was
// removed. Either way the caller makes a fresh worktree.
func (p *Pool) Take(ctx context.Context, repoDir, worktree, branch, startSHA string) error {
	e := p.take(repoDir)
	if e == nil {
		return ErrEmpty
	}
	if err := p.o.Git.ReuseWorktree(ctx, repoDir, e.dir, worktree, branch, startSHA); err != nil {
		return errors.Join(err, p.discard(ctx, repoDir, e.dir, worktree))
	}
	return nil
}

func (p *Pool) take(repo string) *parked {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.parked) - 1; i >= 0; i-- {
		if e := p.parked[i]; e.repo == repo {
			p.drop(i)
			return e
		}
	}
	return nil
}

// Len is the number of parked worktrees of repoDir ("" for all).
func (p *Pool) Len(repoDir string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, e := range p.parked {
		if repoDir == "" || e.repo == repoDir {
			n++
		}
	}
	return n
}

// expire removes e when it is still parked after Idle.
func (p *Pool) expire(e *parked) {
	p.mu.Lock()
	i := -1
	for j, x := range p.parked {
		if x == e {
			i = j
		}
	}
	if i >= 0 {
		p.parked = append(p.parked[:i], p.parked[i+1:]...)
	}
	p.mu.Unlock()
	if i < 0 {
		return // taken or evicted meanwhile
	}
	ctx, cancel := context.WithTimeout(context.Background(), expireTimeout)
	defer cancel()
	_ = p.discard(ctx, e.repo, e.dir) // a failure leaves it to New
}

// Drain removes every parked worktree of repoDir: a parked worktree keeps
// its last run's files and commit, which a retention sweep or an
// uninstall is about to delete from the mirror.
func (p *Pool) Drain(ctx context.Context, repoDir string) error {
	return p.removeAll(ctx, func(e *parked) bool { return e.repo == repoDir })
}

// Close removes every parked worktree.
func (p *Pool) Close(ctx context.Context) error {
	return p.removeAll(ctx, func(*parked) bool { return true })
}

// removeAll takes the parked worktrees that match out of the pool and
// removes them.
func (p *Pool) removeAll(ctx context.Context, match func(*parked) bool) error {
	p.mu.Lock()
	var out []*parked
	for i := 0; i < len(p.parked); {
		if e := p.parked[i]; match(e) {
			p.drop(i)
			out = append(out, e)
			continue
		}
		i++
	}
	p.mu.Unlock()
	var errs []error
	for _, e := range out {
		errs = append(errs, p.discard(ctx, e.repo, e.dir))
	}
	return errors.Join(errs...)
}

// discard removes a worktree of repo found at any of paths (a failed
// move leaves it at one of two) and its registration.
func (p *Pool) discard(ctx context.Context, repo string, paths ...string) error {
	var errs []error
	for _, dir := range paths {
		if err := p.o.Git.RemoveWorktree(ctx, repo, dir); err != nil {
			errs = append(errs, fmt.Errorf("wtpool: remove %s: %w", dir, err))
		}
	}
	return errors.Join(errs...)
}

// clearLeftovers empties dir, made if missing. A parked worktree's
// registration is locked against pruning: the lock goes first, found
// through the worktree's .git file and only when that registration names
// the worktree back.
func clearLeftovers(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("wtpool: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("wtpool: %w", err)
	}
	var errs []error
	for _, e := range entries {
		wt := filepath.Join(dir, e.Name())
		unlockRegistration(wt)
		errs = append(errs, os.RemoveAll(wt))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("wtpool: clear %s: %w", dir, err)
	}
	return nil
}
