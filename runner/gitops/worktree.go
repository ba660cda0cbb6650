package gitops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// runBranchPrefix is the namespace of branches the bot may create, reset
// and force-push. Anything outside it belongs to people.
const runBranchPrefix = "kilroy/"

// RunBranch names the run branch of one pipeline run.
func RunBranch(pipeline, runID string) string {
	return runBranchPrefix + "run/" + pipeline + "/" + runID
}

// AddWorktree creates worktreeDir as a linked worktree of repoDir (the
// user's repository or a bare mirror) with branch checked out at startSHA.
// The branch is created, or reset to startSHA when it exists (resume
// recreates the worktree at its last checkpoint). Only the new worktree
// and the branch ref change: the user's working tree, index and HEAD stay
// as they were. Objects come from repoDir's store, so nothing is cloned.
func (g *Git) AddWorktree(ctx context.Context, repoDir, worktreeDir, branch, startSHA string) error {
	if err := g.checkRunBranch(ctx, repoDir, branch); err != nil {
		return err
	}
	sha, err := g.ResolveRef(ctx, repoDir, startSHA)
	if err != nil {
		return fmt.Errorf("gitops: add worktree: start commit: %w", err)
	}
	abs, err := filepath.Abs(worktreeDir)
	if err != nil {
		return fmt.Errorf("gitops: worktree dir %q: %w", worktreeDir, err)
	}
	// A registration left by a crashed run would hold the branch; one a
	// kill left locked would survive the prune.
	if err := g.clearStale(ctx, repoDir, abs, branch); err != nil {
		return err
	}
	if _, err := g.run(ctx, call{dir: repoDir, args: []string{"worktree", "prune"}}); err != nil {
		return fmt.Errorf("gitops: add worktree: %w", err)
	}
	_, err = g.run(ctx, call{dir: repoDir,
		args: []string{"worktree", "add", "--quiet", "--no-track", "-B", branch, "--", abs, sha}})
	if err != nil {
		return fmt.Errorf("gitops: add worktree %s on %s at %s: %w", abs, branch, sha, err)
	}
	return nil
}

// checkRunBranch refuses branch names outside the bot's namespace, since
// AddWorktree resets and Push force-pushes them.
func (g *Git) checkRunBranch(ctx context.Context, repoDir, branch string) error {
	if !strings.HasPrefix(branch, runBranchPrefix) {
		return fmt.Errorf("gitops: branch %q is not a bot branch: names must start with %q", branch, runBranchPrefix)
	}
	_, err := g.run(ctx, call{dir: repoDir, readOnly: true, args: []string{"check-ref-format", "refs/heads/" + branch}})
	if err != nil {
		return fmt.Errorf("gitops: invalid branch name %q: %w", branch, err)
	}
	return nil
}

// RemoveWorktree deletes a linked worktree of repoDir and prunes its
// registration; the branch and its commits stay. It refuses the main
// working tree and directories that are not worktrees of repoDir, and
// succeeds when the worktree is already gone. A worktree whose .git a node
// deleted is removed by deleting its directory and pruning.
func (g *Git) RemoveWorktree(ctx context.Context, repoDir, worktreeDir string) error {
	g.identities.Delete(worktreeDir)
	target := canonicalPath(worktreeDir)
	if err := g.clearStale(ctx, repoDir, worktreeDir, ""); err != nil {
		return err
	}
	trees, err := g.listWorktrees(ctx, repoDir)
	if err != nil {
		return err
	}
	for i, t := range trees {
		if canonicalPath(t) != target {
			continue
		}
		if i == 0 {
			return fmt.Errorf("gitops: %s is the repository's main working tree, not a run worktree", worktreeDir)
		}
		return g.removeLinked(ctx, repoDir, t)
	}
	if _, err := os.Lstat(worktreeDir); err == nil {
		return fmt.Errorf("gitops: %s is not a worktree of %s: refusing to delete it", worktreeDir, repoDir)
	}
	return g.prune(ctx, repoDir)
}

func (g *Git) removeLinked(ctx context.Context, repoDir, path string) error {
	_, err := g.run(ctx, call{dir: repoDir, args: []string{"worktree", "remove", "--force", "--force", "--", path}})
	if err != nil {
		// git cannot remove a worktree it no longer recognises (.git gone
		// or rewritten); it is registered as ours, so delete it directly.
		if rmErr := os.RemoveAll(path); rmErr != nil {
			return fmt.Errorf("gitops: remove worktree %s: %w (after %w)", path, rmErr, err)
		}
	}
	return g.prune(ctx, repoDir)
}

func (g *Git) prune(ctx context.Context, repoDir string) error {
	if _, err := g.run(ctx, call{dir: repoDir, args: []string{"worktree", "prune"}}); err != nil {
		return fmt.Errorf("gitops: prune worktrees of %s: %w", repoDir, err)
	}
	return nil
}

// listWorktrees returns the worktree paths of repoDir, the main one first.
func (g *Git) listWorktrees(ctx context.Context, repoDir string) ([]string, error) {
	out, err := g.run(ctx, call{dir: repoDir, readOnly: true, args: []string{"worktree", "list", "--porcelain", "-z"}})
	if err != nil {
		return nil, fmt.Errorf("gitops: list worktrees of %s: %w", repoDir, err)
	}
	var paths []string
	for _, field := range bytes.Split(out, []byte{0}) {
		if p, ok := bytes.CutPrefix(field, []byte("worktree ")); ok {
			paths = append(paths, string(p))
		}
	}
	if len(paths) == 0 {
		return nil, errors.New("gitops: git worktree list returned no worktrees")
	}
	return paths, nil
}

// canonicalPath resolves symlinks (as git does when it records a
// worktree) so that /tmp and /private/tmp compare equal; for a path that
// no longer exists its parent is resolved instead.
func canonicalPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	if r, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(r, filepath.Base(abs))
	}
	return abs
}
