package gitops

import (
	"context"
	"fmt"
	"strings"
)

// Reachable returns the commits reachable from tip in repoDir (tip
// included), as a set: which of a run's recorded checkpoints a fetched
// run branch holds.
func (g *Git) Reachable(ctx context.Context, repoDir, tip string) (map[string]bool, error) {
	out, err := g.runStr(ctx, call{dir: repoDir, readOnly: true, args: []string{"rev-list", tip, "--"}})
	if err != nil {
		return nil, fmt.Errorf("gitops: commits of %s: %w", tip, err)
	}
	set := map[string]bool{}
	for _, sha := range strings.Fields(out) {
		set[sha] = true
	}
	return set, nil
}
