package gitops

import (
	"fmt"
	"os"
	"path/filepath"
)

// MaxFileBytes is GitHub's limit on one file in a push (100 MiB): a
// checkpoint holding a larger file could never be pushed.
const MaxFileBytes = 100 << 20

// FileTooLargeError is a checkpoint refused because a file it would
// commit is over MaxFileBytes.
type FileTooLargeError struct {
	Path string // slash-separated, relative to the repository root
	Size int64
}

func (e *FileTooLargeError) Error() string {
	return fmt.Sprintf("%s is %d bytes (%.1f MiB), over GitHub's 100 MiB limit for a file: delete it, or leave it out of checkpoints with artifact_policy.checkpoint.exclude_globs",
		e.Path, e.Size, float64(e.Size)/(1<<20))
}

// checkSizes refuses the first of paths (relative to worktree) that is a
// regular file over MaxFileBytes, before anything is staged.
func checkSizes(worktree string, paths []string) error {
	for _, p := range paths {
		fi, err := os.Lstat(filepath.Join(worktree, filepath.FromSlash(p)))
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted, a link, a directory: small in git
		}
		if fi.Size() > MaxFileBytes {
			return &FileTooLargeError{Path: p, Size: fi.Size()}
		}
	}
	return nil
}
