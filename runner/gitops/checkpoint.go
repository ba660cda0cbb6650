package gitops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// CheckpointSpec describes the checkpoint commit after one node.
type CheckpointSpec struct {
	RunID  string
	NodeID string
	Status string // the node's outcome, e.g. "success", "fail"
	// Branch is the run branch the worktree must be on, without refs/heads/.
	Branch string
	// Exclude are doublestar globs of paths never committed (the resolved
	// artifact policy's checkpoint.exclude_globs).
	Exclude []string
	// Excluded, if set, excludes further paths (slash-separated, relative
	// to the repository root).
	Excluded func(path string) bool
	// Vet, if set, sees the paths about to be committed (slash-separated,
	// relative to the worktree; deleted ones included) before anything is
	// staged; an error leaves the branch and the index as they were.
	Vet func(paths []string) error
}

// CheckpointResult is what a checkpoint committed.
type CheckpointResult struct {
	SHA      string   // the new commit on the run branch
	Staged   []string // changed paths the commit includes
	Excluded []string // changed paths left out by the exclude rules
}

// Checkpoint commits the node's changes to the run branch: every changed,
// deleted or untracked (non-ignored) path except the excluded ones. It
// commits even when nothing changed, so every executed node has a commit.
//
// Excluded paths are never staged. An excluded path that is already
// tracked keeps its committed content: its modification or deletion stays
// uncommitted in the worktree, and if a node staged it the bot unstages
// it. The verify.artifacts handler, not the checkpoint, reports such paths.
//
// A file over GitHub's 100 MiB limit fails the checkpoint with a
// *FileTooLargeError naming it and its size: the branch could never be
// pushed with it.
//
// Before and after committing, HEAD must be on spec.Branch; a node that
// deleted .git or moved HEAD gets ErrWorktreeBroken or ErrHeadMoved and the
// branch keeps its earlier checkpoints.
func (g *Git) Checkpoint(ctx context.Context, worktree string, spec CheckpointSpec) (CheckpointResult, error) {
	msg, err := spec.message()
	if err != nil {
		return CheckpointResult{}, err
	}
	excluded, err := newExcluder(spec.Exclude, spec.Excluded)
	if err != nil {
		return CheckpointResult{}, err
	}
	entries, err := g.checkedStatus(ctx, worktree, spec.Branch)
	if err != nil {
		return CheckpointResult{}, fmt.Errorf("gitops: checkpoint %s: %w", spec.NodeID, err)
	}
	plan := planStaging(entries, excluded)
	if err := checkSizes(worktree, plan.kept); err != nil {
		return CheckpointResult{}, fmt.Errorf("gitops: checkpoint %s: %w", spec.NodeID, err)
	}
	if spec.Vet != nil {
		if err := spec.Vet(plan.kept); err != nil {
			return CheckpointResult{}, err
		}
	}
	if err := g.stage(ctx, worktree, plan); err != nil {
		return CheckpointResult{}, err
	}
	if err := g.commit(ctx, worktree, msg); err != nil {
		return CheckpointResult{}, err
	}
	sha, err := g.headAfterCommit(ctx, worktree, spec.Branch)
	if err != nil {
		return CheckpointResult{}, fmt.Errorf("gitops: after checkpoint %s: %w", spec.NodeID, err)
	}
	return CheckpointResult{SHA: sha, Staged: plan.kept, Excluded: plan.excluded}, nil
}

// headAfterCommit is onBranch read from git's files, without a process;
// git answers when the files do not (a packed ref, a detached HEAD).
func (g *Git) headAfterCommit(ctx context.Context, worktree, branch string) (string, error) {
	ref, sha, err := headFromFiles(worktree)
	switch {
	case errors.Is(err, errNoLooseHead):
		return g.onBranch(ctx, worktree, branch)
	case err != nil:
		return "", err
	case ref != "refs/heads/"+branch:
		return "", fmt.Errorf("%w: HEAD of %s is %s (%s), want refs/heads/%s", ErrHeadMoved, worktree, ref, sha, branch)
	}
	return sha, nil
}

// checkedStatus is status plus the checks that the worktree still has its
// .git and is on branch; one process does both.
func (g *Git) checkedStatus(ctx context.Context, worktree, branch string) ([]statusEntry, error) {
	if err := gitDirPresent(worktree); err != nil {
		return nil, err
	}
	head, entries, err := g.status(ctx, worktree)
	var gerr *Error
	if errors.As(err, &gerr) && gerr.cause == nil {
		return nil, fmt.Errorf("%w: %w", ErrWorktreeBroken, err)
	}
	if err != nil {
		return nil, err
	}
	if head != branch {
		return nil, fmt.Errorf("%w: %s is on %q, want %q", ErrHeadMoved, worktree, head, branch)
	}
	return entries, nil
}

func gitDirPresent(worktree string) error {
	if _, err := os.Lstat(filepath.Join(worktree, ".git")); err != nil {
		return fmt.Errorf("%w: %s/.git: %v", ErrWorktreeBroken, worktree, err)
	}
	return nil
}

// message renders the commit message with its trailers. Fields must be
// single-line so no one can forge a trailer.
func (s CheckpointSpec) message() (string, error) {
	for name, v := range map[string]string{"run id": s.RunID, "node id": s.NodeID, "status": s.Status, "branch": s.Branch} {
		if v == "" || strings.ContainsAny(v, "\r\n") {
			return "", fmt.Errorf("gitops: checkpoint: %s %q must be a non-empty single line", name, v)
		}
	}
	return fmt.Sprintf("kilroy(%s): %s (%s)\n\nKilroy-Run: %s\nKilroy-Node: %s\nKilroy-Status: %s\n",
		s.RunID, s.NodeID, s.Status, s.RunID, s.NodeID, s.Status), nil
}

// onBranch checks that the worktree still has its .git and that HEAD is
// refs/heads/branch, and returns HEAD's SHA.
func (g *Git) onBranch(ctx context.Context, worktree, branch string) (string, error) {
	if err := gitDirPresent(worktree); err != nil {
		return "", err
	}
	out, err := g.runStr(ctx, call{dir: worktree, pinned: true, readOnly: true,
		args: []string{"rev-parse", "HEAD", "--symbolic-full-name", "HEAD"}})
	var gerr *Error
	if errors.As(err, &gerr) && gerr.cause == nil {
		return "", fmt.Errorf("%w: %s: %s", ErrWorktreeBroken, worktree, gerr.Stderr)
	}
	if err != nil {
		return "", err
	}
	sha, ref, _ := strings.Cut(out, "\n")
	if ref != "refs/heads/"+branch {
		return "", fmt.Errorf("%w: HEAD of %s is %s (%s), want refs/heads/%s", ErrHeadMoved, worktree, ref, sha, branch)
	}
	return sha, nil
}
