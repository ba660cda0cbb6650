package gitops

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// ErrNotReusable marks a worktree that cannot be made clean with
// certainty (an index with flags or extensions a fresh checkout has not,
// a registration that is gone): it must be removed, not reused.
var ErrNotReusable = errors.New("worktree not reusable")

// parkedLock is the reason in the lock file of a parked worktree. A
// locked registration survives `git worktree prune`, which another run's
// AddWorktree may run while a parked worktree moves.
const parkedLock = "kilroy-bot: warm worktree\n"

// ParkWorktree takes the linked worktree of repoDir at worktreeDir out of
// its run: it moves it to parkedDir (a rename, so on the same
// filesystem), locks its registration, detaches it from the run branch
// and makes it a clean checkout of at (the run's start commit: the next
// run of the pull request is likely close to it), so that ReuseWorktree
// has little left to do (see settle). On error the worktree may be
// anywhere between the two paths; remove both with RemoveWorktree.
func (g *Git) ParkWorktree(ctx context.Context, repoDir, worktreeDir, parkedDir, at string) error {
	sha, err := g.ResolveRef(ctx, repoDir, at)
	if err != nil {
		return fmt.Errorf("gitops: park worktree: %w", err)
	}
	admin, err := g.registration(ctx, repoDir, worktreeDir)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(admin, "locked"), []byte(parkedLock), 0o644); err != nil {
		return fmt.Errorf("gitops: park worktree: %w", err)
	}
	if err := move(admin, worktreeDir, parkedDir); err != nil {
		return err
	}
	if err := g.scrub(ctx, admin, parkedDir, sha, sha); err != nil {
		return fmt.Errorf("gitops: park worktree %s: %w", worktreeDir, err)
	}
	if err := g.settle(ctx, admin, parkedDir); err != nil {
		return fmt.Errorf("gitops: park worktree %s: %w", worktreeDir, err)
	}
	return nil
}

// settleRacy is how many racily clean entries a parked index may keep.
const settleRacy = 64

// settle spares the take of the worktree at dir (registered at admin)
// hashing files again. Git compares a file's content, not just its stat
// data, when it was modified in the second its index was written or later
// (racily clean), every time it writes that index; a first run parked
// right after its checkout has thousands such. So when more than
// settleRacy are, settle waits for the second after the newest and has
// git refresh the index and write it anew: then none is. The kernel stamps
// files from a clock that may lag the wall clock by a tick, so an index
// written just after the second turned can still carry the old second:
// settle waits a little past it and looks again, a few times at most.
func (g *Git) settle(ctx context.Context, admin, dir string) error {
	for try := 0; ; try++ {
		racy, newest, err := racyEntries(admin)
		if err != nil || racy <= settleRacy || try == settleTries {
			return err
		}
		// Not synchronisation: git's clock is the second.
		select {
		case <-time.After(time.Until(time.Unix(newest+1, 0).Add(settleMargin))):
		case <-ctx.Done():
			return ctx.Err()
		}
		if _, err := g.run(ctx, call{dir: dir, pinned: true, config: []string{"core.untrackedCache=false"},
			args: []string{"update-index", "-q", "--refresh", "--force-write-index"}}); err != nil {
			return err
		}
	}
}

// settleTries bounds settle's rewrites of the index; settleMargin is how
// far past the second it waits (several kernel ticks).
const (
	settleTries  = 3
	settleMargin = 30 * time.Millisecond
)

// racyEntries counts the entries of the index at admin that git would call
// racily clean, and returns the newest such entry's second.
func racyEntries(admin string) (racy int, newest int64, err error) {
	idx, err := readIndex(filepath.Join(admin, "index"))
	if err != nil {
		return 0, 0, err
	}
	idx.file.Close()
	for _, e := range idx.entries {
		if sec := int64(e.mtimeSec); sec >= idx.mtime.Unix() {
			racy, newest = racy+1, max(newest, sec)
		}
	}
	return racy, newest, nil
}

// ReuseWorktree moves the worktree ParkWorktree left at parkedDir to
// worktreeDir and makes it a checkout of startSHA on branch, as
// AddWorktree would: branch is created, or reset when it exists. Only
// the files that differ between the parked checkout and startSHA are
// written. Before that it is cleaned again, so nothing of the run that
// used it last is left: see scrub.
func (g *Git) ReuseWorktree(ctx context.Context, repoDir, parkedDir, worktreeDir, branch, startSHA string) error {
	if err := g.checkRunBranch(ctx, repoDir, branch); err != nil {
		return err
	}
	if !isSHA(startSHA) {
		sha, err := g.ResolveRef(ctx, repoDir, startSHA)
		if err != nil {
			return fmt.Errorf("gitops: reuse worktree: start commit: %w", err)
		}
		startSHA = sha
	}
	admin, err := g.registration(ctx, repoDir, parkedDir)
	if err != nil {
		return err
	}
	if err := move(admin, parkedDir, worktreeDir); err != nil {
		return err
	}
	if err := g.scrub(ctx, admin, worktreeDir, "ref: refs/heads/"+branch, startSHA); err != nil {
		return fmt.Errorf("gitops: reuse worktree for %s: %w", branch, err)
	}
	if err := os.Remove(filepath.Join(admin, "locked")); err != nil {
		return fmt.Errorf("gitops: reuse worktree: unlock: %w", err)
	}
	return nil
}

// registration is the admin directory (<common>/worktrees/<id>) of the
// worktree at dir, found from the repository's side: the worktree's own
// .git file is the node's to rewrite and is not trusted.
func (g *Git) registration(ctx context.Context, repoDir, dir string) (string, error) {
	common, err := g.runStr(ctx, call{dir: repoDir, readOnly: true,
		args: []string{"rev-parse", "--path-format=absolute", "--git-common-dir"}})
	if err != nil {
		return "", fmt.Errorf("gitops: find the git directory of %s: %w", repoDir, err)
	}
	admin, ok := adminDirOf(common, dir)
	if !ok {
		return "", fmt.Errorf("gitops: %s is not a worktree of %s: %w", dir, repoDir, ErrNotReusable)
	}
	return admin, nil
}

// move renames the worktree registered at admin; a symlink or file in
// its place is refused, since everything after writes into it. The
// registration names the new path first: if the bot dies between the two,
// the registration is of the path that a run's clean-up (RemoveWorktree,
// AddWorktree) unlocks and prunes.
func move(admin, from, to string) error {
	fi, err := os.Lstat(from)
	if err != nil {
		return fmt.Errorf("gitops: move worktree: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("gitops: move worktree: %s is not a directory: %w", from, ErrNotReusable)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return fmt.Errorf("gitops: move worktree: %w", err)
	}
	if err := writeGitdir(admin, to); err != nil {
		return fmt.Errorf("gitops: move worktree: %w", err)
	}
	if err := os.Rename(from, to); err != nil {
		return errors.Join(fmt.Errorf("gitops: move worktree: %w", err), writeGitdir(admin, from))
	}
	return nil
}

// writeGitdir registers the worktree at dir in its registration admin.
func writeGitdir(admin, dir string) error {
	return os.WriteFile(filepath.Join(admin, "gitdir"), []byte(filepath.Join(dir, ".git")+"\n"), 0o644)
}

// scrub makes the worktree at dir, registered at admin, a clean checkout
// of sha with HEAD set to head (a symbolic ref or a commit id), leaving
// nothing a run wrote:
//
//   - the worktree's .git file is written anew, whatever a node put there
//     (kept if it is a plain file that says exactly that);
//   - the registration keeps only its index (checked by loadIndex) and
//     lock; HEAD, commondir and gitdir are written anew (the same way) and
//     every other file (config.worktree, info/sparse-checkout, MERGE_HEAD,
//     rebase state, logs, refs) is removed;
//   - tidyTree removes everything the index does not track (as `git clean
//     -ffdx`), nested .git entries, hard links, odd permissions and every
//     tracked file that is not exactly what the index recorded, before
//     any git runs in the tree; parking and reusing both do, so a process
//     that outlived its run and wrote into a parked worktree is undone too;
//   - git then moves the tree to sha, writing only the files that differ:
//     when tidyTree found every tracked file as recorded, git restores
//     from sha just the paths that differ between it and the index's own
//     tree (computed from its entries, so it names exactly what the index
//     holds; see applySwitch), without looking at any other file;
//     otherwise `reset --hard` looks at every file and writes back the
//     ones tidyTree removed.
//
// The index's stat data is trusted, which is what spares rewriting
// unchanged files: a node cannot forge a changed file's ctime, and in the
// sandbox it cannot write the registration (mounted read-only), so a file
// it touched always looks changed. The repository's common directory
// (config, hooks, info/) is not the worktree's: a node reaches it no more
// than a fresh worktree's. Without the sandbox (--insecure-no-sandbox)
// nodes can write both, as everything else the bot owns.
func (g *Git) scrub(ctx context.Context, admin, dir, head, sha string) error {
	if err := resetRegistration(admin, dir, head); err != nil {
		return err
	}
	idx, top, err := loadIndex(filepath.Join(admin, "index"))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotReusable, err)
	}
	defer closeLater(idx.file)
	c := call{dir: dir, pinned: true, config: []string{"core.untrackedCache=false", "core.sparseCheckout=false"}}
	// What git does outside the worktree runs while it is tidied.
	planned := make(chan switchPlan, 1)
	go func() { planned <- g.planSwitch(ctx, c, top, head, sha) }()
	clean, err := tidyTree(dir, idx)
	plan := <-planned
	if err != nil {
		return fmt.Errorf("tidy: %w", err)
	}
	if plan.err != nil {
		return plan.err
	}
	moved := false
	if clean && plan.paths != nil {
		if moved, err = g.applySwitch(ctx, c, plan.paths, top, sha); err != nil {
			return err
		}
	}
	if !moved {
		c.args = []string{"reset", "--hard", "--quiet", "--no-recurse-submodules", sha}
		if _, err := g.run(ctx, c); err != nil {
			return err
		}
	}
	// reset records the commit it left, the parked one, as ORIG_HEAD; a
	// fresh worktree's names its own start (worktree add resets too).
	return writeKept(admin, "ORIG_HEAD", sha+"\n")
}

// loadIndex reads the index at p and the tree its entries make.
func loadIndex(p string) (*workIndex, string, error) {
	idx, err := readIndex(p)
	if err != nil {
		return nil, "", err
	}
	trees, err := indexTrees(idx.entries)
	if err != nil {
		return nil, "", err
	}
	if idx.cacheTree != nil {
		if err := checkCacheTree(idx.cacheTree, trees); err != nil {
			return nil, "", err
		}
	}
	top := trees[""].oid
	return idx, hex.EncodeToString(top[:]), nil
}

// keptInRegistration are the files of a worktree's registration that
// survive a scrub: the index (checked after), the lock, and the files
// scrub writes, kept where they already say what it would write.
var keptInRegistration = map[string]bool{"index": true, "locked": true,
	"HEAD": true, "commondir": true, "gitdir": true, "ORIG_HEAD": true}

// resetRegistration rewrites the worktree's .git file and its
// registration's HEAD, commondir and gitdir, and removes every other
// entry of the registration but the index and the lock.
func resetRegistration(admin, dir, head string) error {
	if err := writeKept(dir, ".git", "gitdir: "+admin+"\n"); err != nil {
		return err
	}
	entries, err := os.ReadDir(admin)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if keptInRegistration[e.Name()] && e.Type().IsRegular() {
			continue
		}
		if err := os.RemoveAll(filepath.Join(admin, e.Name())); err != nil {
			return err
		}
	}
	files := []struct{ name, body string }{
		{"HEAD", strings.TrimSpace(head) + "\n"},
		{"commondir", "../..\n"},
		{"gitdir", filepath.Join(dir, ".git") + "\n"},
	}
	for _, f := range files {
		if err := writeKept(admin, f.name, f.body); err != nil {
			return err
		}
	}
	return nil
}

// writeKept makes dir/name a file holding body, keeping the file that is
// there when it holds exactly that (a file replaced costs a new inode
// and the old one's blocks, which some filesystems discard synchronously).
// Anything else there, a symlink or a file with other links included, is
// removed first.
func writeKept(dir, name, body string) error {
	p := filepath.Join(dir, name)
	if f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0); err == nil {
		same := holds(f, body)
		f.Close()
		if same {
			return nil
		}
	}
	if err := os.RemoveAll(p); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(body)
	return errors.Join(err, f.Close())
}

// holds says whether f is a regular file with one link holding body.
func holds(f *os.File, body string) bool {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != int64(len(body)) {
		return false
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Nlink != 1 {
		return false
	}
	b := make([]byte, len(body)+1)
	n, _ := io.ReadFull(f, b)
	return string(b[:n]) == body
}
