package gitops

import (
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// newExcluder combines doublestar globs and an optional predicate into one
// test on repository-relative, slash-separated paths. A path is excluded
// when any glob matches the whole path or the predicate says so; globs are
// matched with doublestar's semantics only (no gitignore-style implicit
// directory matching), the same engine the artifact policy uses.
func newExcluder(globs []string, pred func(string) bool) (func(string) bool, error) {
	for _, g := range globs {
		if !doublestar.ValidatePattern(g) {
			return nil, fmt.Errorf("gitops: invalid exclude glob %q: %w: fix the pattern in artifact_policy.checkpoint.exclude_globs", g, doublestar.ErrBadPattern)
		}
	}
	return func(path string) bool {
		// A nested repository is reported as a directory ("sub/").
		path = strings.TrimSuffix(path, "/")
		for _, g := range globs {
			if doublestar.MatchUnvalidated(g, path) {
				return true
			}
		}
		return pred != nil && pred(path)
	}, nil
}
