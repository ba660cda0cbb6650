package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
	"golang.org/x/sys/unix"
)

type mountKind int

// Kinds in the order they win when two mounts name the same path.
const (
	mSymlink mountKind = iota
	mROBind
	mTmpfs
	mRWBind
	mMaskDir  // an empty tmpfs over something a node must not see
	mMaskFile // /dev/null over a file a node must not see
	mROGit    // repository metadata: read-only even inside the workspace
	mSplit    // a small tmpfs that holds mount points in an image (image_root.go)
)

type mount struct {
	kind mountKind
	src  string // bind source, or symlink target
	dst  string
	fd   *os.File // a bind's source, opened (binder); nil for /dev/null
}

// systemDirs are shown read-only; /etc as the Sandbox's view of it
// (etcView). Nothing else of the host is there unless a Jail names it.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/etc"}

// plan computes the mounts of one process, ordered so that a deeper path
// is mounted after its ancestors (the more specific mount decides) and
// masks of hidden paths come after whatever exposed them. env decides no
// bind, only where the private HOME goes: binds are the Jail's own fields.
// Every bind holds its source open (see binder); the caller closes them
// (closeMounts).
func (j *Jail) plan(env []string) (ms []mount, err error) {
	s := j.Sandbox
	defer func() {
		if err != nil {
			closeMounts(ms)
			ms = nil
		}
	}()
	ms = j.identityMounts(ms)
	for _, d := range s.systemDirs() {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
			continue
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(d)
			if err != nil {
				return ms, fmt.Errorf("sandbox: %w", err)
			}
			ms = append(ms, mount{kind: mSymlink, src: target, dst: d})
		case d == "/etc":
			if f, err := openAt(unix.AT_FDCWD, s.etc, unix.RESOLVE_NO_SYMLINKS); err == nil {
				ms = append(ms, mount{kind: mROBind, src: s.etc, dst: d, fd: f})
			}
		case fi.IsDir():
			if f, err := openAt(unix.AT_FDCWD, d, unix.RESOLVE_NO_SYMLINKS); err == nil {
				ms = append(ms, mount{kind: mROBind, src: d, dst: d, fd: f})
			}
		}
	}
	if s.resolv != "" {
		// Network public's name server, over the view's (or the image's)
		// resolv.conf: by descriptor, as every bind.
		f, err := openAt(unix.AT_FDCWD, s.resolv, unix.RESOLVE_NO_SYMLINKS)
		if err != nil {
			return ms, fmt.Errorf("sandbox: %s: %w", s.resolv, err)
		}
		ms = append(ms, mount{kind: mROBind, src: s.resolv, dst: "/etc/resolv.conf", fd: f})
	}
	b, err := j.makeRoots()
	if err != nil {
		return ms, err
	}
	ms = append(ms, mount{kind: mTmpfs, dst: "/tmp"}, mount{kind: mSymlink, src: "/tmp", dst: "/var/tmp"})
	if home, ok := Lookup(env, "HOME"); ok && filepath.IsAbs(home) && home != "/" {
		if h := j.homePath(home); !j.writable(h) {
			ms = append(ms, mount{kind: mTmpfs, dst: h})
		}
	}
	for _, d := range j.ReadOnly {
		ms = b.bindHost(ms, d)
	}
	if ms, err = j.fixedBinds(ms); err != nil {
		return ms, err
	}
	for _, r := range b.roots {
		f, err := b.openRoot(r)
		if err != nil {
			if r.optional {
				continue
			}
			return ms, fmt.Errorf("sandbox: writable dir: %w", err)
		}
		ms = append(ms, mount{kind: mRWBind, src: r.canon, dst: r.canon, fd: f})
	}
	ms = append(ms, s.masks(ms)...)
	git, err := b.gitMounts(j.Workspace)
	ms = append(ms, git...)
	if err != nil {
		return ms, err
	}
	return order(ms), nil
}

// makeRoots makes the jail's outermost writable roots where missing and
// returns the binder that opens the jail's sources. A root within another
// is shown through it: it is neither made nor bound, as a node may have
// planted a link on its way. A cache that cannot be made is left out.
func (j *Jail) makeRoots() (*binder, error) {
	s := j.Sandbox
	all := append(append([]string{j.Workspace}, j.Writable...), j.Caches...)
	required := 1 + len(j.Writable)
	for i, d := range all {
		if d == "" || !filepath.IsAbs(d) || nestedIn(filepath.Clean(d), all) {
			continue
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			if i >= required {
				continue
			}
			return nil, fmt.Errorf("sandbox: writable dir: %w", err)
		}
		// Looked up afresh: a stage directory is new for every node,
		// and an earlier look may have found it missing.
		s.paths.refresh(d, time.Now())
	}
	return newBinder(s, all, required), nil
}

// bindHost adds a read-only bind of d, a host directory or file a node
// reads (a PATH entry, a toolchain, the operator's read-only paths), when
// it exists. One in a writable root is shown through the root's bind.
// Nothing is bound over /etc: the view shows all of it a node may see.
func (b *binder) bindHost(ms []mount, d string) []mount {
	if !filepath.IsAbs(d) || b.inRoot(filepath.Clean(d)) {
		return ms
	}
	f, at, ok := b.openHost(d)
	if !ok {
		return ms
	}
	if at == "/" || within(at, "/etc") {
		f.Close()
		return ms
	}
	return append(ms, mount{kind: mROBind, src: at, dst: at, fd: f})
}

// writable reports whether p is inside one of the Writable directories: a
// HOME there (an agent CLI's isolated HOME under its stage directory) is
// shown as it is, with what the bot prepared in it, instead of a private
// tmpfs that would hide it. Any other HOME (the host's) stays hidden.
func (j *Jail) writable(p string) bool {
	for _, d := range j.Writable {
		if d != "" && within(p, j.Sandbox.paths.resolve(d).canon) {
			return true
		}
	}
	return false
}

// closeMounts closes the sources of ms's binds.
func closeMounts(ms []mount) {
	for _, m := range ms {
		if m.fd != nil {
			m.fd.Close()
		}
	}
}

// maskOf hides dst, where the jail would show host path shown.
func maskOf(shown, dst string) mount {
	if fi, err := os.Lstat(shown); err == nil && fi.IsDir() {
		return mount{kind: mMaskDir, dst: dst}
	}
	return mount{kind: mMaskFile, src: "/dev/null", dst: dst}
}

// masks hides every hidden path that some bind would expose: a bind whose
// source has something at the hidden path's place.
func (s *Sandbox) masks(ms []mount) []mount {
	var out []mount
	for _, h := range s.hidden {
		for _, m := range ms {
			if (m.kind != mROBind && m.kind != mRWBind) || !within(h, m.dst) {
				continue
			}
			shown := filepath.Join(m.src, strings.TrimPrefix(h, m.dst))
			if _, err := os.Lstat(shown); err == nil {
				out = append(out, maskOf(shown, h))
				break
			}
		}
	}
	return out
}

// gitMounts makes the repository metadata of the workspace read-only: its
// .git file and the git directory and common directory it leads to. A node
// can then neither point the bot's git at a repository of its own nor
// write config, attributes or hooks the bot's git would honour. The .git
// is opened below the workspace without following a link; the
// directories it names are the bot's, outside every writable root.
func (b *binder) gitMounts(workspace string) ([]mount, error) {
	if workspace == "" {
		return nil, nil
	}
	r, rel, ok := b.locate(workspace)
	if !ok {
		return nil, fmt.Errorf("sandbox: workspace %s is no writable root", workspace)
	}
	rel = filepath.Join(rel, ".git")
	dotgit := filepath.Join(r.canon, rel)
	f, err := b.openBelow(r, rel)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil, nil // not a repository: nothing to protect
	case err != nil:
		return nil, fmt.Errorf("sandbox: %s is neither a file nor a directory: %w", dotgit, err)
	}
	ms := []mount{{kind: mROGit, src: dotgit, dst: dotgit, fd: f}}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return ms, fmt.Errorf("sandbox: %w", err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return ms, nil
	case unix.S_IFREG:
	default:
		return ms, fmt.Errorf("sandbox: %s is neither a file nor a directory", dotgit)
	}
	gitdir, err := readGitdirFile(dotgit)
	if err != nil {
		return ms, err
	}
	ms = b.bindGit(ms, gitdir)
	if common, err := readSmallFile(filepath.Join(gitdir, "commondir")); err == nil {
		c := strings.TrimSpace(common)
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitdir, c)
		}
		ms = b.bindGit(ms, c)
	}
	return ms, nil
}

// bindGit adds a read-only bind of git directory d, when it exists
// outside the writable roots.
func (b *binder) bindGit(ms []mount, d string) []mount {
	if !filepath.IsAbs(d) || b.inRoot(filepath.Clean(d)) {
		return ms
	}
	if f, at, ok := b.openHost(d); ok {
		if at == "/" {
			f.Close()
			return ms
		}
		ms = append(ms, mount{kind: mROGit, src: at, dst: at, fd: f})
	}
	return ms
}

func readGitdirFile(dotgit string) (string, error) {
	body, err := readSmallFile(dotgit)
	if err != nil {
		return "", fmt.Errorf("sandbox: read %s: %w", dotgit, err)
	}
	p, ok := strings.CutPrefix(strings.TrimSpace(body), "gitdir: ")
	if !ok {
		return "", fmt.Errorf("sandbox: %s does not name a git directory", dotgit)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(dotgit), p)
	}
	return filepath.Clean(p), nil
}

// readSmallFile reads a regular file of at most 4 KiB without following a
// symlink at its last element.
func readSmallFile(p string) (string, error) {
	b, err := safefile.ReadIn(filepath.Dir(p), filepath.Base(p), 4<<10)
	return string(b), err
}

// order sorts mounts parents first; for one path the strongest kind wins
// and the others are dropped.
func order(ms []mount) []mount {
	slices.SortStableFunc(ms, func(a, b mount) int {
		if d := depth(a.dst) - depth(b.dst); d != 0 {
			return d
		}
		if c := strings.Compare(a.dst, b.dst); c != 0 {
			return c
		}
		return int(a.kind) - int(b.kind)
	})
	out := ms[:0]
	for i, m := range ms {
		if i+1 < len(ms) && ms[i+1].dst == m.dst || redundant(out, m) {
			// A stronger mount of the same path follows, or the one
			// around shows it already.
			if m.fd != nil {
				m.fd.Close()
			}
			continue
		}
		out = append(out, m)
	}
	return out
}

// redundant reports whether m would show what its nearest mounted ancestor
// shows already: the same kind of bind of the same tree (/usr/bin under
// /usr, a module cache under its GOPATH). Every bind costs a start time.
func redundant(placed []mount, m mount) bool {
	if m.kind != mROBind && m.kind != mRWBind && m.kind != mROGit || m.src != m.dst {
		return false
	}
	for i := len(placed) - 1; i >= 0; i-- {
		a := placed[i]
		if a.dst == "/" || !within(m.dst, a.dst) {
			continue
		}
		return a.kind == m.kind && a.src == a.dst
	}
	return false
}

func depth(p string) int {
	if p == "/" {
		return 0
	}
	return strings.Count(filepath.Clean(p), "/")
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// firstBindFD is the descriptor of a jail's first bind source in bwrap:
// the handshake's are 3 and 4 (handshakeArgs).
const firstBindFD = 5

// args renders mounts as bwrap options, and returns the bind sources in
// the order bwrap must get them, after files, from firstBindFD on. A private tmpfs
// (/tmp, HOME) holds at most tmpSize bytes (half the memory limit: tmpfs
// pages are memory, and a full /tmp should fail a write, not get the node
// killed; 0 leaves the kernel's default); a mask holds one page, so it
// cannot be filled either. /dev/null, which masks a file, is the host's
// device, in a directory no node writes.
func args(ms []mount, tmpSize int64, files []*os.File) ([]string, []*os.File) {
	var a []string
	bindFD := func(opt string, m mount) {
		a = append(a, opt, strconv.Itoa(firstBindFD+len(files)), m.dst)
		files = append(files, m.fd)
	}
	for _, m := range ms {
		switch m.kind {
		case mSymlink:
			a = append(a, "--symlink", m.src, m.dst)
		case mROBind, mROGit:
			bindFD("--ro-bind-fd", m)
		case mRWBind:
			bindFD("--bind-fd", m)
		case mTmpfs:
			if tmpSize > 0 {
				a = append(a, "--size", strconv.FormatInt(tmpSize, 10))
			}
			a = append(a, "--tmpfs", m.dst)
		case mMaskDir:
			a = append(a, "--size", "4096", "--tmpfs", m.dst)
		case mMaskFile:
			a = append(a, "--ro-bind", "/dev/null", m.dst)
		case mSplit:
			a = append(a, "--size", strconv.Itoa(splitTmpfsSize), "--tmpfs", m.dst)
		}
	}
	return a, files
}
