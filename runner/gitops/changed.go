package gitops

import (
	"bytes"
	"context"
	"fmt"
	"sort"
)

// ChangedSince lists what a run changed in worktree since baseSHA, for the
// verify.artifacts handler. committed holds the paths added, modified or
// renamed (by destination) on the branch between baseSHA and HEAD;
// uncommitted holds modified, added and untracked non-ignored paths of the
// worktree that HEAD does not have yet. Deleted paths are in neither:
// removing a file cannot pollute the repository. Both lists are sorted and
// free of duplicates.
func (g *Git) ChangedSince(ctx context.Context, worktree, baseSHA string) (committed, uncommitted []string, err error) {
	base, err := g.ResolveRef(ctx, worktree, baseSHA)
	if err != nil {
		return nil, nil, fmt.Errorf("gitops: changed since: %w", err)
	}
	out, err := g.run(ctx, call{dir: worktree, pinned: true, readOnly: true,
		args: []string{"diff", "--name-only", "-z", "--no-ext-diff", "--no-textconv", "--find-renames", "--diff-filter=d", base, "HEAD", "--"}})
	if err != nil {
		return nil, nil, fmt.Errorf("gitops: diff %s..HEAD in %s: %w", base, worktree, err)
	}
	committed = splitNul(out)
	_, entries, err := g.status(ctx, worktree)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries {
		if !e.deleted() {
			uncommitted = append(uncommitted, e.Path)
		}
	}
	return sortUnique(committed), sortUnique(uncommitted), nil
}

func splitNul(b []byte) []string {
	var out []string
	for _, f := range bytes.Split(b, []byte{0}) {
		if len(f) > 0 {
			out = append(out, string(f))
		}
	}
	return out
}

func sortUnique(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
