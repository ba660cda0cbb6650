package gitops

import (
	"context"
	"strings"
)

// maxRestorePaths is how many changed paths applySwitch restores one by
// one; past it, `read-tree` rebuilding the whole index costs less
// (restore matches every entry against every path).
const maxRestorePaths = 100

// switchPlan is what git prepared, outside the worktree, to move it from
// the tree its index holds to a commit.
type switchPlan struct {
	// paths differ between the two trees (the topmost of them, see
	// topmostPaths); nil when git could not tell (the index's tree is
	// not in the repository), for reset to do the work.
	paths []string
	err   error
}

// planSwitch lists the paths that differ between the tree from and the
// commit sha and, when head is a symbolic ref, points it at sha (the
// branch a reset would move). It neither reads nor writes the worktree,
// so it runs while the worktree is tidied.
func (g *Git) planSwitch(ctx context.Context, c call, from, head, sha string) switchPlan {
	var plan switchPlan
	c.args = []string{"diff-tree", "-r", "-z", "--no-renames", "--name-only", from, sha}
	out, err := g.run(ctx, c)
	switch {
	case err == nil:
		plan.paths = topmostPaths(out)
	case ctx.Err() != nil:
		return switchPlan{err: err}
	}
	if ref, ok := strings.CutPrefix(head, "ref: "); ok {
		c.args = []string{"update-ref", "-m", "reset: moving to " + sha, ref, sha}
		if _, err := g.run(ctx, c); err != nil {
			return switchPlan{err: err}
		}
	}
	return plan
}

// applySwitch moves the index and the tree from the tree from (what the
// index holds, every file as recorded) to the commit sha, writing only
// paths, the ones that differ. It says false when git refused, for reset
// to do the work.
func (g *Git) applySwitch(ctx context.Context, c call, paths []string, from, sha string) (bool, error) {
	switch {
	case len(paths) == 0:
		return true, nil
	case len(paths) <= maxRestorePaths:
		c.stdin = strings.NewReader(strings.Join(paths, "\x00"))
		c.args = []string{"--literal-pathspecs", "restore", "--quiet", "--no-overlay", "--no-recurse-submodules",
			"--source=" + sha, "--staged", "--worktree", "--pathspec-from-file=-", "--pathspec-file-nul"}
	default:
		c.args = []string{"read-tree", "-m", "-u", from, sha}
	}
	_, err := g.run(ctx, c)
	if err == nil {
		return true, nil
	}
	if ctx.Err() != nil {
		return false, err
	}
	return false, nil
}

// topmostPaths are the NUL-terminated paths of out without those below
// another: where a file becomes a directory or the other way round, the
// path of the one names both for restore, which refuses a path that the
// other's change already took out of the index.
func topmostPaths(out []byte) []string {
	all := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(all) == 1 && all[0] == "" {
		return []string{}
	}
	set := make(map[string]bool, len(all))
	for _, p := range all {
		set[p] = true
	}
	top := all[:0]
	for _, p := range all {
		below := false
		for i := strings.IndexByte(p, '/'); i >= 0 && !below; i = nextSlash(p, i) {
			below = set[p[:i]]
		}
		if !below {
			top = append(top, p)
		}
	}
	return top
}

// nextSlash is the index of the first "/" in p after i, or -1.
func nextSlash(p string, i int) int {
	j := strings.IndexByte(p[i+1:], '/')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}
