package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Every bind of a jail is opened by the bot, without following a symbolic
// link a node could have planted, and handed to bubblewrap as a
// descriptor (--bind-fd, --ro-bind-fd): bubblewrap binds the path the
// descriptor stands for and then checks that what it mounted is the
// descriptor's file, and gives up otherwise. A node of a parallel branch
// that flips a directory of a shared cache between a real one and a link
// to the host's root can then make a jail fail to start, never show what
// the link leads to.
//
// The writable roots (the workspace, the Writable directories, the caches)
// are the bot's own directories, at paths no node can change: their
// parents are never shown writable. What lies below them a node may have
// replaced by anything, so nothing below them is bound on its own: it is
// shown through its root's bind, and a bind there would let bubblewrap
// resolve its mount point through a link, after the check. Only the
// repository's .git is bound below the workspace (gitMounts), and no
// other jail of the worktree runs while one starts.

// openFlags open a bind source: a path only, never its contents. Never
// O_NOFOLLOW: with O_PATH it would open a link at the end of the path
// itself, which RESOLVE_NO_SYMLINKS then lets through, and bwrap would
// bind what the link points to.
const openFlags = unix.O_PATH | unix.O_CLOEXEC

// binder opens the bind sources of one jail.
type binder struct {
	s *Sandbox
	// roots are the jail's outermost writable roots: the others lie
	// within one of them.
	roots []root
}

// root is a writable root: the path the Jail gives and its canonical
// form, which the bot resolves trusting the host's links (no component
// of it is a node's), and where the jail shows it; optional: a cache, not
// bound when it is missing.
type root struct {
	given, canon, dst string
	optional          bool
}

// newBinder returns the binder of a jail with writable roots roots: the
// outermost are bound (a nested one is shown through its outer root).
func newBinder(s *Sandbox, roots []jailRoot) *binder {
	b := &binder{s: s}
	for _, r := range roots {
		if r.nested {
			continue
		}
		canon := s.paths.resolve(r.host).canon
		if canon == "/" {
			continue // never the host's root, whatever a Jail says
		}
		b.roots = append(b.roots, root{given: r.host, canon: canon, dst: r.dst, optional: !r.required})
	}
	return b
}

// inDst reports whether p, a path in the jail, lies in a root's place
// there.
func (b *binder) inDst(p string) bool {
	for _, r := range b.roots {
		if within(p, r.dst) {
			return true
		}
	}
	return false
}

// locate returns the root p is or lies below, and p relative to it.
func (b *binder) locate(p string) (root, string, bool) {
	p = filepath.Clean(p)
	for _, r := range b.roots {
		for _, base := range []string{r.given, r.canon} {
			if within(p, base) {
				rel, err := filepath.Rel(base, p)
				return r, rel, err == nil
			}
		}
	}
	return root{}, "", false
}

// openRoot opens root r for a bind of it.
func (b *binder) openRoot(r root) (*os.File, error) {
	return openAt(unix.AT_FDCWD, r.canon, unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
}

// openBelow opens rel below root r: never through a link, never out of r.
func (b *binder) openBelow(r root, rel string) (*os.File, error) {
	rf, err := b.openRoot(r)
	if err != nil {
		return nil, err
	}
	defer rf.Close()
	return openAt(int(rf.Fd()), rel, unix.RESOLVE_BENEATH|unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
}

// openHost opens p, a path outside the writable roots, and returns where
// it is: the host's own links on the way (/bin -> usr/bin, a toolchain
// installed through a link) are followed, as they are the host's. ok is
// false when there is nothing to bind at p: it is missing, or it leads
// into a writable root, which shows it already or where a node may have
// planted the link.
func (b *binder) openHost(p string) (f *os.File, at string, ok bool) {
	if at, ok = b.hostPath(p); !ok {
		return nil, "", false
	}
	f, err := openAt(unix.AT_FDCWD, at, unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
	return f, at, err == nil
}

// hostPath is where p, a path outside the writable roots, is, as openHost
// opens it: false when a link on the way is missing or leads into a
// writable root, or p is in one.
func (b *binder) hostPath(p string) (at string, ok bool) {
	p = filepath.Clean(p)
	at = p
	if b.s.paths.resolve(p).canon != p {
		// The path goes through a link: walk it, so that no link found
		// in a writable root is followed.
		if at, ok = b.walk(p); !ok {
			return "", false
		}
	}
	if b.inRoot(at) {
		return "", false
	}
	return at, true
}

// walk resolves the links of p one by one, and stops (false) at a
// writable root.
func (b *binder) walk(p string) (string, bool) {
	cur, rest := "/", strings.Split(strings.TrimPrefix(p, "/"), "/")
	for links := 0; len(rest) > 0; {
		if b.inRoot(cur) {
			return "", false
		}
		next := filepath.Join(cur, rest[0])
		rest = rest[1:]
		fi, err := os.Lstat(next)
		if err != nil {
			return "", false
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		target, err := os.Readlink(next)
		if links++; err != nil || links > 40 {
			return "", false
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		rest = append(strings.Split(strings.Trim(target, "/"), "/"), rest...)
	}
	return cur, true
}

// inRoot reports whether p is a writable root or lies below one.
func (b *binder) inRoot(p string) bool {
	for _, r := range b.roots {
		if within(p, r.given) || within(p, r.canon) {
			return true
		}
	}
	return false
}

// openAt opens path from dir with openat2 and the given resolve flags.
func openAt(dir int, path string, resolve uint64) (*os.File, error) {
	how := unix.OpenHow{Flags: openFlags, Resolve: resolve}
	for try := 0; ; try++ {
		fd, err := unix.Openat2(dir, path, &how)
		if (errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN)) && try < 8 {
			continue // EAGAIN: a rename raced the lookup; try again
		}
		if err != nil {
			return nil, fmt.Errorf("sandbox: open %s: %w", path, err)
		}
		return os.NewFile(uintptr(fd), path), nil
	}
}
