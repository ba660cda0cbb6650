package runner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
)

// Parallel branches in git: nodeHost is an attractor.BranchHost.
//
// Branch i of parallel node P gets the worktree <run-dir>/branches/P-i on
// the branch kilroy/branch/<pipeline>/<run-id>/P/i-<head>, started at the
// run worktree's HEAD, which is the last checkpoint. (It cannot live under
// the run branch's name: git refuses a ref a/b next to a/b/c.) The branch's
// host is a copy of the run's bound to that worktree: same node
// environment, same exclude rules for its checkpoints, which do not touch
// checkpoint.json, so a resumed run restarts the parallel node from the
// run branch. When the branch ends its worktree is removed and the branch
// kept: the fan-in merges it, also after a resume, and people can inspect it.

// Fork makes a worktree and branch for one parallel branch.
func (h *nodeHost) Fork(ctx context.Context, req attractor.ForkRequest) (attractor.Branch, error) {
	if h.runDir == "" || h.repoDir == "" {
		return attractor.Branch{}, errors.New("this run has no directory for branch worktrees")
	}
	start, err := h.git.HeadSHA(ctx, h.worktree)
	if err != nil {
		return attractor.Branch{}, fmt.Errorf("fork branch %s: %w", req.Head, err)
	}
	name := branchName(h.branch, req)
	dir := filepath.Join(string(h.runDir), "branches", fmt.Sprintf("%s-%d", refSafe(req.Parallel.ID), req.Index))
	// A crashed run may have left the worktree behind; resume forks again.
	if err := h.git.RemoveWorktree(ctx, h.repoDir, dir); err != nil {
		return attractor.Branch{}, fmt.Errorf("fork branch %s: %w", req.Head, err)
	}
	if err := h.git.AddWorktree(ctx, h.repoDir, dir, name, start); err != nil {
		return attractor.Branch{}, fmt.Errorf("fork branch %s: %w", req.Head, err)
	}
	bh := *h
	bh.worktree, bh.branch, bh.onCheckpoint = dir, name, nil
	return attractor.Branch{Host: &bh, Workspace: dir, Ref: name}, nil
}

// Release removes a finished branch's worktree; its branch stays.
func (h *nodeHost) Release(ctx context.Context, b attractor.Branch) error {
	return h.git.RemoveWorktree(ctx, h.repoDir, b.Workspace)
}

// Join merges the branches into the run worktree in the order given. The
// fan-in node's checkpoint, which follows, records the merged head.
func (h *nodeHost) Join(ctx context.Context, req attractor.JoinRequest) (string, error) {
	sha, err := h.git.MergeBranches(ctx, h.worktree, req.Refs)
	var mc *gitops.MergeConflictError
	if errors.As(err, &mc) {
		return "", &attractor.MergeConflictError{Ref: mc.Branch, Paths: mc.Paths}
	}
	return sha, err
}

// branchName puts a parallel branch next to its run branch:
// kilroy/run/<pipeline>/<run-id> forks kilroy/branch/<pipeline>/<run-id>/….
func branchName(runBranch string, req attractor.ForkRequest) string {
	rest, ok := strings.CutPrefix(runBranch, "kilroy/run/")
	if !ok {
		rest = strings.TrimPrefix(runBranch, "kilroy/")
	}
	return fmt.Sprintf("kilroy/branch/%s/%s/%d-%s", rest, refSafe(req.Parallel.ID), req.Index, refSafe(req.Head))
}

// refSafe makes a node ID usable as one ref and path element. The branch
// index beside it keeps one fan-out's names unique even when two IDs map
// to the same text.
func refSafe(id string) string {
	b := []byte(id)
	for i, c := range b {
		ok := c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !ok {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "_"
	}
	return string(b)
}
