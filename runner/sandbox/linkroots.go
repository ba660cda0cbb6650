package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// Programs on PATH are often links to where they live: nvm's
// bin/claude is ../lib/node_modules/@anthropic-ai/claude-code/cli.js, a
// project's node_modules/.bin/eslint is ../eslint/bin/eslint.js, a
// hand-made ~/bin/tool points into /srv/tool/bin. A jail that shows the
// PATH directory alone shows a dangling link ("command not found"), so
// it also shows, read-only, what those links point into. Only the bot's
// own PATH is read this way (a repository's variables choose nothing),
// and directories under the system roots, which the jail shows whole,
// are not read at all.

// Bounds on the reading: entries read per PATH directory, and places
// shown for links (each is a bind, and every bind costs each start).
const (
	maxLinkEntries = 512
	maxLinkRoots   = 16
)

// linkRoots remembers each PATH directory's link roots for pathTTL.
type linkRoots struct {
	mu sync.Mutex
	m  map[string]linkRootsOf
}

type linkRootsOf struct {
	roots []string
	at    time.Time
}

// of returns the places the links in dirs point into outside dirs and
// the system roots: for a target inside a node_modules tree, the tree
// (its packages load one another); else the target's directory.
func (c *linkRoots) of(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		if !filepath.IsAbs(d) || underSystemDir(d) {
			continue
		}
		for _, r := range c.dir(d) {
			if len(out) == maxLinkRoots {
				return out
			}
			if !slices.ContainsFunc(dirs, func(p string) bool { return within(r, p) }) && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	return out
}

// dir is the link roots of one PATH directory, read at most every pathTTL.
func (c *linkRoots) dir(d string) []string {
	now := time.Now()
	c.mu.Lock()
	got, ok := c.m[d]
	c.mu.Unlock()
	if ok && now.Sub(got.at) < pathTTL {
		return got.roots
	}
	roots := readLinkRoots(d)
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]linkRootsOf{}
	}
	c.m[d] = linkRootsOf{roots: roots, at: now}
	c.mu.Unlock()
	return roots
}

func readLinkRoots(d string) []string {
	canonD, err := filepath.EvalSymlinks(d)
	if err != nil {
		return nil
	}
	f, err := os.Open(canonD)
	if err != nil {
		return nil
	}
	defer f.Close()
	ents, _ := f.ReadDir(maxLinkEntries)
	var roots []string
	for _, e := range ents {
		if e.Type()&os.ModeSymlink == 0 {
			continue
		}
		target, err := filepath.EvalSymlinks(filepath.Join(canonD, e.Name()))
		if err != nil || within(target, canonD) || underSystemDir(target) {
			continue
		}
		root := filepath.Dir(target)
		if tree, ok := NodeModulesTree(target); ok {
			root = tree
		}
		if root != "/" && !hostOnly(root) && !slices.Contains(roots, root) {
			roots = append(roots, root)
		}
	}
	return roots
}

// underSystemDir reports whether p is in a root the jail shows whole.
func underSystemDir(p string) bool {
	return slices.ContainsFunc(systemDirs, func(s string) bool { return within(p, s) })
}

// hostOnly are trees no link may bring into a jail.
func hostOnly(p string) bool {
	return slices.ContainsFunc([]string{"/proc", "/sys", "/dev", "/run", "/var/run"}, func(s string) bool { return within(p, s) })
}
