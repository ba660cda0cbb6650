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
	mData     // a read-only file of the bot's making: fd holds its bytes (gitMounts)
)

type mount struct {
	kind mountKind
	src  string // bind source, or symlink target
	dst  string
	fd   *os.File // a bind's source, opened (binder), or mData's bytes; nil for /dev/null
	// lazy: a host directory's bind (bindHost) whose source is opened
	// only once order has kept it (openKept): most PATH entries lie in
	// a system directory and are shown through its bind.
	lazy bool
}

// systemDirs are shown read-only; /etc as the Sandbox's view of it
// (etcView). Nothing else of the host is there unless a Jail names it.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/etc"}

// plan computes the mounts of one process, ordered so that a deeper path
// is mounted after its ancestors (the more specific mount decides) and
// masks of hidden paths come after whatever exposed them. env, as the jail
// shows it (Jail.jailed), decides no bind, only where the private HOME
// goes: binds are the Jail's own fields.
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
	if s.resolv != "" && s.image != nil {
		// Network public's name server, over the image's resolv.conf
		// (the host's /etc view holds it): by descriptor, as every bind.
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
		// A HOME in a root (an agent CLI's isolated HOME under its stage
		// directory) is shown as it is, with what the bot prepared in it;
		// any other is a private tmpfs.
		if h := filepath.Clean(home); !b.inDst(h) && !reserved(h) {
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
		ms = append(ms, mount{kind: mRWBind, src: r.canon, dst: r.dst, fd: f})
	}
	ms = append(ms, s.masks(ms)...)
	git, err := b.gitMounts(j.Workspace)
	ms = append(ms, git...)
	if err != nil {
		return ms, err
	}
	return openKept(order(ms)), nil
}

// openKept opens the sources of the lazy binds ms kept (bindHost), and
// drops one whose source is gone.
func openKept(ms []mount) []mount {
	out := ms[:0]
	for _, m := range ms {
		if m.lazy {
			f, err := openAt(unix.AT_FDCWD, m.src, unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
			if err != nil {
				continue
			}
			m.fd, m.lazy = f, false
		}
		out = append(out, m)
	}
	return out
}

// makeRoots makes the jail's outermost writable roots where missing and
// returns the binder that opens the jail's sources. A root within another
// is shown through it: it is neither made nor bound, as a node may have
// planted a link on its way. A cache that cannot be made is left out.
func (j *Jail) makeRoots() (*binder, error) {
	s := j.Sandbox
	roots := j.roots()
	for _, r := range roots {
		if r.nested {
			continue
		}
		if err := os.MkdirAll(r.host, 0o755); err != nil {
			if !r.required {
				continue
			}
			return nil, fmt.Errorf("sandbox: writable dir: %w", err)
		}
		// Looked up afresh where an earlier look found it missing (a
		// stage directory is new for every node); the bot's roots
		// stay where they are.
		if !s.paths.resolve(r.host).exists {
			s.paths.refresh(r.host, time.Now())
		}
	}
	return newBinder(s, roots), nil
}

// bindHost adds a read-only bind of d, a host directory or file a node
// reads (a PATH entry, a toolchain, the operator's read-only paths), at
// its own path, when it exists. One in a writable root is shown through
// the root's bind, where the jail shows the root. Nothing is bound over
// /etc (the view shows all of it a node may see), nor at the jail's own
// paths (reserved). Its source is opened once order has kept it (lazy):
// opened as openHost opens it, after the same walk.
func (b *binder) bindHost(ms []mount, d string) []mount {
	if !filepath.IsAbs(d) || b.inRoot(filepath.Clean(d)) {
		return ms
	}
	at, ok := b.hostPath(d)
	if !ok || at == "/" || within(at, "/etc") || reserved(at) {
		return ms
	}
	return append(ms, mount{kind: mROBind, src: at, dst: at, lazy: true})
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
// source has something at the hidden path's place. A host directory bound
// at its own path (a system directory, a toolchain; /etc, whose source is
// the view) shows hidden path h at h; a root shows what lies below it at
// its place in the jail.
func (s *Sandbox) masks(ms []mount) []mount {
	var out []mount
	for _, h := range s.hidden {
		for _, m := range ms {
			var shown, dst string
			switch {
			case m.kind == mROBind && within(h, m.dst):
				shown, dst = filepath.Join(m.src, strings.TrimPrefix(h, m.dst)), h
			case m.kind == mRWBind && within(h, m.src):
				shown, dst = h, filepath.Join(m.dst, strings.TrimPrefix(h, m.src))
			default:
				continue
			}
			if _, err := os.Lstat(shown); err == nil {
				out = append(out, maskOf(shown, dst))
				break
			}
		}
	}
	return out
}

// gitMounts makes the repository metadata of the workspace read-only: its
// .git and the git directory and common directory it leads to. A node can
// then neither point the bot's git at a repository of its own nor write
// config, attributes or hooks the bot's git would honour. The .git is
// opened below the workspace without following a link; the directories it
// names are the bot's, outside every writable root.
//
// They are shown at GitPath, not at their host paths, so the jail's .git
// file is one of the bot's making (mData) that names them there; the
// host's, which the bot's own git reads, is left as it is. A worktree's
// git directory is shown at GitPath/worktrees/workspace, over an empty
// GitPath/worktrees: no other worktree of the repository (another run's)
// is listed, and its gitdir file names WorkspacePath/.git, so git
// worktree list shows what the jail has.
func (b *binder) gitMounts(workspace string) ([]mount, error) {
	if workspace == "" {
		return nil, nil
	}
	r, rel, ok := b.locate(workspace)
	if !ok {
		return nil, fmt.Errorf("sandbox: workspace %s is no writable root", workspace)
	}
	rel = filepath.Join(rel, ".git")
	dotgit, jailDotgit := filepath.Join(r.canon, rel), filepath.Join(r.dst, rel)
	f, err := b.openBelow(r, rel)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil, nil // not a repository: nothing to protect
	case err != nil:
		return nil, fmt.Errorf("sandbox: %s is neither a file nor a directory: %w", dotgit, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return []mount{{kind: mROGit, src: dotgit, dst: jailDotgit, fd: f}}, nil
	case unix.S_IFREG:
		f.Close()
	default:
		f.Close()
		return nil, fmt.Errorf("sandbox: %s is neither a file nor a directory", dotgit)
	}
	gitdir, err := readGitdirFile(dotgit)
	if err != nil {
		return nil, err
	}
	ms, jailGitdir, err := b.gitDirs(gitdir, WorkspacePath)
	if err != nil {
		return ms, err
	}
	return appendData(ms, jailDotgit, "gitdir: "+jailGitdir+"\n")
}

// gitDirs binds git directory gitdir (a .git file's) and its common
// directory, and returns where the jail shows gitdir. A linked worktree's
// git directory gets the common directory's worktrees/ to itself (see
// gitMounts), with its commondir and gitdir files saying where the jail
// has them. A git directory in a writable root (a repository of the
// run's own) is shown through the root, as it is.
func (b *binder) gitDirs(gitdir, workspace string) ([]mount, string, error) {
	common, body := gitdir, ""
	if c, err := readSmallFile(filepath.Join(gitdir, "commondir")); err == nil {
		body = strings.TrimSpace(c)
		common = body
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitdir, common)
		}
		common = filepath.Clean(common)
	}
	if r, rel, ok := b.locate(gitdir); ok {
		return nil, filepath.Join(r.dst, rel), nil
	}
	jailCommon := GitPath
	if r, rel, ok := b.locate(common); ok {
		jailCommon = filepath.Join(r.dst, rel)
	}
	ms := b.bindGit(nil, common, GitPath)
	if common == gitdir {
		return ms, GitPath, nil
	}
	registered := filepath.Join(GitPath, "worktrees", gitWorktreeName)
	jailGitdir := GitPath + "dir" // no place for it in the common directory: one of its own
	if fi, err := os.Lstat(filepath.Join(common, "worktrees")); err == nil && fi.IsDir() && jailCommon == GitPath {
		jailGitdir = registered
		ms = append(ms, mount{kind: mMaskDir, dst: filepath.Join(GitPath, "worktrees")})
	}
	ms = b.bindGit(ms, gitdir, jailGitdir)
	var errs []error
	var err error
	if body != "../.." || jailGitdir != registered {
		ms, err = appendData(ms, filepath.Join(jailGitdir, "commondir"), jailCommon+"\n")
		errs = append(errs, err)
	}
	if fi, err := os.Lstat(filepath.Join(gitdir, "gitdir")); err == nil && fi.Mode().IsRegular() {
		ms, err = appendData(ms, filepath.Join(jailGitdir, "gitdir"), filepath.Join(workspace, ".git")+"\n")
		errs = append(errs, err)
	}
	return ms, jailGitdir, errors.Join(errs...)
}

// bindGit adds a read-only bind of git directory d at dst, when it exists
// outside the writable roots.
func (b *binder) bindGit(ms []mount, d, dst string) []mount {
	if !filepath.IsAbs(d) || b.inRoot(filepath.Clean(d)) {
		return ms
	}
	if f, at, ok := b.openHost(d); ok {
		if at == "/" {
			f.Close()
			return ms
		}
		ms = append(ms, mount{kind: mROGit, src: at, dst: dst, fd: f})
	}
	return ms
}

// appendData adds a read-only file at dst that holds body (mData).
func appendData(ms []mount, dst, body string) ([]mount, error) {
	f, err := memFile("kilroy-jail-file", body)
	if err != nil {
		return ms, err
	}
	return append(ms, mount{kind: mData, dst: dst, fd: f}), nil
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
		case mData:
			bindFD("--ro-bind-data", m)
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
