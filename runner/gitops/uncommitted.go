package gitops

import (
	"context"
	"fmt"
)

// Uncommitted lists the paths below dir (repository-relative, such as
// .kilroy) of repo's working tree that differ from HEAD or are untracked
// and not ignored: what a run of HEAD does not see. It only reads, so it
// may run while the user works in repo.
func (g *Git) Uncommitted(ctx context.Context, repo, dir string) ([]string, error) {
	out, err := g.run(ctx, call{dir: repo, readOnly: true,
		args: []string{"--no-optional-locks", "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--", dir}})
	if err != nil {
		return nil, fmt.Errorf("gitops: status of %s in %s: %w", dir, repo, err)
	}
	entries, err := parseStatus(out)
	if err != nil {
		return nil, fmt.Errorf("gitops: status of %s in %s: %w", dir, repo, err)
	}
	paths := make([]string, 0, len(entries))
	for _, e := range entries {
		paths = append(paths, e.Path)
	}
	return sortUnique(paths), nil
}
