package gitops

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
)

// errNoLooseHead means the refs could not be read from the files alone (a
// packed ref, an unusual layout); the caller asks git instead.
var errNoLooseHead = errors.New("gitops: HEAD not readable from the ref files")

// headFromFiles returns the ref HEAD of worktree names and the commit it
// points at by reading git's own files (.git, HEAD, commondir, the loose
// ref, packed-refs), which saves a git process per checkpoint. Every read
// is a small regular file inside its directory. Inside the sandbox these
// files are read-only to nodes; outside it, a node that rewrote them can
// at most mislead the bot about its own run, as it could through git.
func headFromFiles(worktree string) (ref, sha string, err error) {
	gitdir, err := gitDirOf(worktree)
	if err != nil {
		return "", "", err
	}
	head, err := small(gitdir, "HEAD")
	if err != nil {
		return "", "", err
	}
	ref, ok := strings.CutPrefix(head, "ref: ")
	if !ok || !strings.HasPrefix(ref, "refs/heads/") || strings.Contains(ref, "..") {
		return "", "", errNoLooseHead // detached, or not a branch: let git say
	}
	common := gitdir
	if c, err := small(gitdir, "commondir"); err == nil {
		common = c
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitdir, common)
		}
	}
	if sha, err := small(common, filepath.FromSlash(ref)); err == nil && isSHA(sha) {
		return ref, sha, nil
	}
	packed, err := safefile.ReadIn(common, "packed-refs", 64<<20)
	if err != nil {
		return "", "", errNoLooseHead
	}
	sc := bufio.NewScanner(bytes.NewReader(packed))
	for sc.Scan() {
		if s, r, ok := strings.Cut(sc.Text(), " "); ok && r == ref && isSHA(s) {
			return ref, s, nil
		}
	}
	return "", "", errNoLooseHead
}

// gitDirOf is the git directory of a worktree: .git itself, or the one its
// .git file names.
func gitDirOf(worktree string) (string, error) {
	dotgit := filepath.Join(worktree, ".git")
	body, err := small(worktree, ".git")
	if err != nil {
		// A directory (a repository's main worktree) reads as an error.
		if isDir(dotgit) {
			return dotgit, nil
		}
		return "", fmt.Errorf("%w: %s: %v", ErrWorktreeBroken, dotgit, err)
	}
	p, ok := strings.CutPrefix(body, "gitdir: ")
	if !ok {
		return "", fmt.Errorf("%w: %s names no git directory", ErrWorktreeBroken, dotgit)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(worktree, p)
	}
	return filepath.Clean(p), nil
}

func small(dir, name string) (string, error) {
	b, err := safefile.ReadIn(dir, name, 4<<10)
	return strings.TrimSpace(string(b)), err
}

func isSHA(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func isDir(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.IsDir()
}
