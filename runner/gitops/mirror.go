package gitops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// defaultRefspecs is what Fetch fetches when given none: the remote's
// branches under refs/remotes/origin/ (never refs/heads/, where the run
// branches of this mirror's worktrees live) and its tags.
func defaultRefspecs() []string {
	return []string{"+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*"}
}

// EnsureMirror makes dir a bare repository if it is not one already. The
// mirror has no configured remote: Fetch is always given the URL, so no URL
// (let alone a credential) is stored in its config.
func (g *Git) EnsureMirror(ctx context.Context, dir, cloneURL string) error {
	if err := checkRemoteURL(cloneURL); err != nil {
		return err
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("gitops: mirror dir: %w", err)
	}
	defer g.mirrorLocks.lock(dir)()
	if g.isBareRepo(ctx, dir) {
		return nil
	}
	if err := requireEmptyOrMissing(dir); err != nil {
		return fmt.Errorf("gitops: mirror for %s: %w", cloneURL, err)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("gitops: mirror parent: %w", err)
	}
	_, err = g.run(ctx, call{dir: filepath.Dir(dir), args: []string{"init", "--quiet", "--bare", "--", dir}})
	if err != nil {
		return fmt.Errorf("gitops: create mirror for %s: %w", cloneURL, err)
	}
	return nil
}

// Fetch updates the mirror from cloneURL with a freshly fetched token.
// Without refspecs it fetches defaultRefspecs.
func (g *Git) Fetch(ctx context.Context, mirrorDir, cloneURL string, refspecs ...string) error {
	if err := checkRemoteURL(cloneURL); err != nil {
		return err
	}
	if len(refspecs) == 0 {
		refspecs = defaultRefspecs()
	}
	dir, err := filepath.Abs(mirrorDir)
	if err != nil {
		return fmt.Errorf("gitops: mirror dir: %w", err)
	}
	defer g.mirrorLocks.lock(dir)()
	c := call{dir: dir, pinned: true,
		args: append([]string{"--git-dir=" + dir, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--", cloneURL}, refspecs...)}
	if c, err = g.withAuth(ctx, c, cloneURL); err != nil {
		return err
	}
	if _, err := g.run(ctx, c); err != nil {
		return fmt.Errorf("gitops: fetch %s into mirror: %w", cloneURL, err)
	}
	return nil
}

// isBareRepo reports whether dir itself (not a parent found by discovery)
// is a bare repository.
func (g *Git) isBareRepo(ctx context.Context, dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); err != nil {
		return false
	}
	out, err := g.runStr(ctx, call{dir: dir, readOnly: true, pinned: true,
		args: []string{"--git-dir=" + dir, "rev-parse", "--is-bare-repository"}})
	return err == nil && out == "true"
}

// requireEmptyOrMissing refuses to turn a directory with content into a
// mirror: it is somebody's data, not a cache.
func requireEmptyOrMissing(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("%s exists, is not empty and is not a bare repository: remove it or choose another data dir", dir)
	}
	return nil
}
