package gitops

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// clearStale removes what a git process killed while it created or
// updated this run's worktree left behind, so the run can recreate it:
// `git worktree add` locks the new worktree ("initializing") until its
// checkout is done, and a locked registration survives `worktree prune`
// and blocks a new `worktree add` at the same path for good; a killed
// checkout leaves the worktree's index.lock, and a killed branch update
// the branch's ref lock. Only the registration of worktreeDir and the lock
// of branch (a run branch: nothing but this run writes it) are touched,
// never another run's. branch may be empty.
func (g *Git) clearStale(ctx context.Context, repoDir, worktreeDir, branch string) error {
	out, err := g.run(ctx, call{dir: repoDir, readOnly: true,
		args: []string{"rev-parse", "--path-format=absolute", "--git-common-dir"}})
	if err != nil {
		return fmt.Errorf("gitops: find the git directory of %s: %w", repoDir, err)
	}
	common := strings.TrimSpace(string(out))
	var errs []error
	if admin, ok := adminDirOf(common, worktreeDir); ok {
		errs = append(errs, removeIfExists(filepath.Join(admin, "locked")), removeIfExists(filepath.Join(admin, "index.lock")))
	}
	if branch != "" && strings.HasPrefix(branch, runBranchPrefix) {
		errs = append(errs, removeIfExists(filepath.Join(common, "refs", "heads", filepath.FromSlash(branch)+".lock")))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("gitops: clear stale state of worktree %s: %w", filepath.Base(worktreeDir), err)
	}
	return nil
}

// adminDirOf finds the registration of worktreeDir under common/worktrees:
// the directory whose gitdir file points at worktreeDir/.git.
func adminDirOf(common, worktreeDir string) (string, bool) {
	want := map[string]bool{filepath.Clean(worktreeDir): true, canonicalPath(worktreeDir): true}
	if abs, err := filepath.Abs(worktreeDir); err == nil {
		want[abs] = true
	}
	entries, err := os.ReadDir(filepath.Join(common, "worktrees"))
	if err != nil {
		return "", false
	}
	for _, e := range entries {
		admin := filepath.Join(common, "worktrees", e.Name())
		b, err := os.ReadFile(filepath.Join(admin, "gitdir"))
		if err != nil {
			continue
		}
		dir := filepath.Dir(strings.TrimSpace(string(b)))
		if want[dir] || want[canonicalPath(dir)] {
			return admin, true
		}
	}
	return "", false
}

func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
