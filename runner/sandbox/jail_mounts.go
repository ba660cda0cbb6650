package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
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
)

type mount struct {
	kind mountKind
	src  string // bind source, or symlink target
	dst  string
}

// systemDirs are shown read-only; /etc as the Sandbox's view of it
// (etcView). Nothing else of the host is there unless a Jail names it.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/etc"}

// toolchainVars name directories a node reads its toolchains from; they
// are shown read-only. Caches are in Jail.Caches.
var toolchainVars = []string{"GOROOT", "RUSTUP_HOME", "JAVA_HOME", "MAVEN_HOME", "M2_HOME", "NVM_DIR",
	"PYENV_ROOT", "VOLTA_HOME", "VIRTUAL_ENV"}

// plan computes the mounts of one process, ordered so that a deeper path
// is mounted after its ancestors (the more specific mount decides) and
// masks of hidden paths come after whatever exposed them.
func (j *Jail) plan(env []string) ([]mount, error) {
	s := j.Sandbox
	var ms []mount
	for _, d := range systemDirs {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
			continue
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(d)
			if err != nil {
				return nil, fmt.Errorf("sandbox: %w", err)
			}
			ms = append(ms, mount{kind: mSymlink, src: target, dst: d})
		case d == "/etc":
			ms = append(ms, mount{kind: mROBind, src: s.etc, dst: d})
		case fi.IsDir():
			ms = append(ms, mount{kind: mROBind, src: d, dst: d})
		}
	}
	if s.resolv != "" {
		ms = append(ms, mount{kind: mROBind, src: s.resolv, dst: "/etc/resolv.conf"})
	}
	ms = append(ms, mount{kind: mTmpfs, dst: "/tmp"}, mount{kind: mSymlink, src: "/tmp", dst: "/var/tmp"})
	if home, ok := Lookup(env, "HOME"); ok && filepath.IsAbs(home) && home != "/" {
		if h := s.paths.resolve(home).canon; !j.writable(h) {
			ms = append(ms, mount{kind: mTmpfs, dst: h})
		}
	}
	path, _ := Lookup(env, "PATH")
	for _, d := range filepath.SplitList(path) {
		if !j.plantedLink(d) {
			ms = s.bind(ms, mROBind, d)
		}
	}
	for _, v := range toolchainVars {
		if d, ok := Lookup(env, v); ok && !j.plantedLink(d) {
			ms = s.bind(ms, mROBind, d)
		}
	}
	for _, d := range j.ReadOnly {
		if !j.plantedLink(d) {
			ms = s.bind(ms, mROBind, d)
		}
	}
	for _, d := range j.Caches {
		if !j.plantedLink(d) {
			ms = s.bindCache(ms, d)
		}
	}
	for _, d := range append([]string{j.Workspace}, j.Writable...) {
		if d == "" || j.plantedLink(d) {
			continue
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("sandbox: writable dir: %w", err)
		}
		// Looked up afresh: the HOME check above may have cached it as
		// missing a moment ago, before MkdirAll made it (a stage
		// directory is new for every node), and a bind of it is never
		// optional.
		s.paths.refresh(d, time.Now())
		ms = s.bind(ms, mRWBind, d)
	}
	ms = append(ms, s.masks(ms)...)
	git, err := gitMounts(j.Workspace)
	if err != nil {
		return nil, err
	}
	ms = append(ms, git...)
	return order(ms), nil
}

// plantedLink reports whether d lies below a directory nodes may write
// (a cache, the worktree, a writable directory) through a symbolic link
// found there now. A node may have planted it so that a later jail binds
// what it points to, a host directory no jail may show, or so that the
// bot makes a directory there; such a path is neither made nor bound. It
// is looked up afresh for every jail: the path cache's view may be older
// than the link. (A node running at the same time could still swap a link
// in between this check and bwrap's mount: caches are shared, see the
// threat model.)
func (j *Jail) plantedLink(d string) bool {
	if !filepath.IsAbs(d) {
		return false
	}
	d = filepath.Clean(d)
	for _, r := range append(append([]string{j.Workspace}, j.Writable...), j.Caches...) {
		if r == "" || !filepath.IsAbs(r) {
			continue
		}
		r = filepath.Clean(r)
		if d == r || !within(d, r) {
			continue
		}
		rel, err := filepath.Rel(r, d)
		if err != nil {
			continue
		}
		p := r
		for _, part := range strings.Split(rel, string(filepath.Separator)) {
			p = filepath.Join(p, part)
			fi, err := os.Lstat(p)
			if err != nil {
				break // missing from here on: nothing planted below
			}
			if fi.Mode()&os.ModeSymlink != 0 {
				return true
			}
		}
	}
	return false
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

// bind adds a bind of d when it is an absolute path that exists, as far
// as the Sandbox knows (see pathCache). Nothing is bound over /etc: the
// view shows all of it a node may see.
func (s *Sandbox) bind(ms []mount, kind mountKind, d string) []mount {
	if !filepath.IsAbs(d) {
		return ms
	}
	if info := s.paths.resolve(d); info.exists && !within(info.canon, "/etc") {
		ms = append(ms, mount{kind: kind, src: info.canon, dst: info.canon})
	}
	return ms
}

// bindCache adds a read-write bind of cache directory d, created when
// missing.
func (s *Sandbox) bindCache(ms []mount, d string) []mount {
	if !filepath.IsAbs(d) {
		return ms
	}
	if !s.paths.resolve(d).exists {
		if os.MkdirAll(d, 0o755) != nil {
			return ms
		}
		s.paths.refresh(d, time.Now())
	}
	return s.bind(ms, mRWBind, d)
}

// maskOf hides dst, where the jail would show host path shown.
func maskOf(shown, dst string) mount {
	if fi, err := os.Lstat(shown); err == nil && fi.IsDir() {
		return mount{kind: mMaskDir, dst: dst}
	}
	return mount{kind: mMaskFile, src: "/dev/null", dst: dst}
}

// appendExisting adds a bind of d when it is an absolute, existing path,
// looked up now.
func appendExisting(ms []mount, kind mountKind, d string) []mount {
	if !filepath.IsAbs(d) {
		return ms
	}
	c := canonical(d)
	if _, err := os.Stat(c); err != nil || c == "/" {
		return ms
	}
	return append(ms, mount{kind: kind, src: c, dst: c})
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
// write config, attributes or hooks the bot's git would honour.
func gitMounts(workspace string) ([]mount, error) {
	if workspace == "" {
		return nil, nil
	}
	dotgit := filepath.Join(canonical(workspace), ".git")
	fi, err := os.Lstat(dotgit)
	switch {
	case err != nil:
		return nil, nil // not a repository: nothing to protect
	case fi.IsDir():
		return []mount{{kind: mROGit, src: dotgit, dst: dotgit}}, nil
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("sandbox: %s is neither a file nor a directory", dotgit)
	}
	gitdir, err := readGitdirFile(dotgit)
	if err != nil {
		return nil, err
	}
	ms := []mount{{kind: mROGit, src: dotgit, dst: dotgit}}
	ms = appendExisting(ms, mROGit, gitdir)
	if common, err := readSmallFile(filepath.Join(gitdir, "commondir")); err == nil {
		c := strings.TrimSpace(common)
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitdir, c)
		}
		ms = appendExisting(ms, mROGit, c)
	}
	return ms, nil
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
		if i+1 < len(ms) && ms[i+1].dst == m.dst {
			continue // a stronger mount of the same path follows
		}
		if redundant(out, m) {
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

// args renders mounts as bwrap options. A private tmpfs (/tmp, HOME) holds
// at most tmpSize bytes (half the memory limit: tmpfs pages are memory, and
// a full /tmp should fail a write, not get the node killed; 0 leaves the
// kernel's default); a mask holds one page, so it cannot be filled either.
func args(ms []mount, tmpSize int64) []string {
	var a []string
	for _, m := range ms {
		switch m.kind {
		case mSymlink:
			a = append(a, "--symlink", m.src, m.dst)
		case mROBind:
			a = append(a, "--ro-bind-try", m.src, m.dst) // see pathCache
		case mRWBind:
			a = append(a, "--bind-try", m.src, m.dst)
		case mROGit:
			a = append(a, "--ro-bind", m.src, m.dst)
		case mTmpfs:
			if tmpSize > 0 {
				a = append(a, "--size", strconv.FormatInt(tmpSize, 10))
			}
			a = append(a, "--tmpfs", m.dst)
		case mMaskDir:
			a = append(a, "--size", "4096", "--tmpfs", m.dst)
		case mMaskFile:
			a = append(a, "--ro-bind", "/dev/null", m.dst)
		}
	}
	return a
}
