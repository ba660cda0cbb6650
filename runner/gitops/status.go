package gitops

import (
	"bytes"
	"context"
	"fmt"
	"strings"
)

// statusEntry is one record of `git status --porcelain=v1 -z`.
type statusEntry struct {
	X, Y byte   // index and worktree status letters
	Path string // the path; for a rename or copy, the destination
	Orig string // the source of a rename or copy, else ""
}

// worktreeDiffers reports whether the worktree differs from the index, so
// staging has something to record for the path.
func (e statusEntry) worktreeDiffers() bool { return e.Y != ' ' }

// staged reports whether the index differs from HEAD for the path.
func (e statusEntry) staged() bool { return e.X != ' ' && e.X != '?' && e.X != '!' }

// deleted reports whether the path no longer exists in the worktree after
// the change.
func (e statusEntry) deleted() bool { return e.Y == 'D' || (e.X == 'D' && e.Y == ' ') }

// status runs git status in a worktree and parses it, returning the
// branch HEAD is on ("" when detached). Untracked files are listed one by
// one (-uall) so the exclude globs see every path; ignored files are not
// listed at all. Renames are reported as a deletion plus an addition, so
// each side meets the exclude rules on its own. --no-optional-locks: the
// status only reads, where git would otherwise rewrite the index to
// refresh stat data (a lock file made and renamed on every checkpoint);
// the commit that follows refreshes it.
func (g *Git) status(ctx context.Context, worktree string) (string, []statusEntry, error) {
	out, err := g.run(ctx, call{dir: worktree, pinned: true,
		args: []string{"--no-optional-locks", "status", "--porcelain=v1", "-z", "--branch", "--untracked-files=all", "--ignore-submodules=none", "--no-renames"}})
	if err != nil {
		return "", nil, fmt.Errorf("gitops: status of %s: %w", worktree, err)
	}
	header, rest, _ := bytes.Cut(out, []byte{0})
	entries, err := parseStatus(rest)
	return parseBranchHeader(string(header)), entries, err
}

// parseBranchHeader reads "## BRANCH[...UPSTREAM][ [ahead N]]"; a
// detached HEAD ("## HEAD (no branch)") yields "".
func parseBranchHeader(h string) string {
	name, ok := strings.CutPrefix(h, "## ")
	if !ok || name == "HEAD (no branch)" {
		return ""
	}
	name, _, _ = strings.Cut(name, "...")
	name, _, _ = strings.Cut(name, " ")
	return name
}

// parseStatus parses porcelain v1 -z output: "XY PATH\0", and for renames
// and copies "XY NEW\0OLD\0". Paths are raw bytes, never quoted, so spaces,
// newlines and non-ASCII names survive.
func parseStatus(b []byte) ([]statusEntry, error) {
	var entries []statusEntry
	for len(b) > 0 {
		rec, rest, ok := bytes.Cut(b, []byte{0})
		if !ok {
			return nil, fmt.Errorf("gitops: status: unterminated record %q", rec)
		}
		if len(rec) < 4 || rec[2] != ' ' {
			return nil, fmt.Errorf("gitops: status: malformed record %q", rec)
		}
		e := statusEntry{X: rec[0], Y: rec[1], Path: string(rec[3:])}
		b = rest
		if isRenameOrCopy(e.X) || isRenameOrCopy(e.Y) {
			orig, rest, ok := bytes.Cut(b, []byte{0})
			if !ok || len(orig) == 0 {
				return nil, fmt.Errorf("gitops: status: rename of %q without source", e.Path)
			}
			e.Orig, b = string(orig), rest
		}
		entries = append(entries, e)
	}
	return entries, nil
}

func isRenameOrCopy(c byte) bool { return c == 'R' || c == 'C' }
