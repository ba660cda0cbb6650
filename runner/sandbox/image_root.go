package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// An image root. A Sandbox made WithImage builds its jails on an unpacked
// OCI image instead of the host's system directories and /etc view: the
// tree is bound read-only at "/" (by descriptor, like every bind), and the
// jail's own mounts (the worktree, the stage directory, managed roots,
// caches, HOME, /tmp, /proc, /dev) go on top of it.
//
// Those mounts need mount points, which a read-only tree cannot take when
// it lacks them; and the image may have a symbolic link where a mount
// goes, which bubblewrap would follow while it makes the mount. The image
// store gives every tree it unpacks the jail's mount points
// (AddMountPoints, image_mountpoints.go), so that such a tree is bound
// whole, but a tree unpacked before, or an image with a link or a file on
// the way, lacks some. So every mount point is placed by the bot first
// (imagePlan): a destination whose every component is a real directory of
// the image (or, for a file bind, ends in a regular file; for a link, is
// the same link) is used as it is; otherwise the deepest real directory
// on its way is "split": a small tmpfs replaces it, every entry of the
// image's directory is bound (or recreated as the same link) into it
// except the one on the way, and bwrap makes the rest of the path as
// plain directories in the tmpfs. No link of the image is ever on the way
// to a mount point, so no mount lands anywhere but where it is named.
// Split directories are made read-only once their mounts are in.
//
// /dev is the image's own directory, with the devices bound on its empty
// files, when it has all of the jail's /dev mount points (a store's tree
// does), else a tmpfs of its own as in the host jail. /var/tmp, a link to
// /tmp in the host jail, is a private tmpfs where the image has it as a
// directory (replacing it with the link would split /var), and the link
// where the image has none (the store adds it).
//
// Identity. Only the jail user (JailUID) is mapped in the user namespace,
// onto the bot's uid, and the store writes every file of an image as the
// bot: inside the jail the whole image shows as owned by the jail user,
// with the modes the image gave (the store keeps them, minus setuid and
// setgid), so a node reads everything the image's owner could. The mount
// is read-only, so owning a file grants no write. The image's User is not
// honoured: nodes run as the jail user, as in the host jail. The jail's
// passwd and group are bound over the image's when it has them as files,
// so the jail user has a name and a home.

// Image is the root filesystem of a run's jails.
type Image struct {
	// Root is the unpacked tree; it is only ever read.
	Root string
	// Env is the image's configured environment ("NAME=value"), the base
	// of every node's (NodeEnv). A PATH is added when it has none.
	Env []string
	// Name says which image it is in messages ("golang:1.23").
	Name string
}

// defaultImagePATH is the PATH of an image that sets none, as container
// engines default it.
const defaultImagePATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// WithImage returns a Sandbox like s whose jails have img as their root
// filesystem. It shares s's limits, cgroups and prewarmed jails; Close s,
// not it. A nil s stays nil (no sandbox).
func (s *Sandbox) WithImage(img Image) *Sandbox {
	if s == nil {
		return nil
	}
	c := *s
	img.Env = slices.Clone(img.Env)
	if _, ok := Lookup(img.Env, "PATH"); !ok {
		img.Env = append(img.Env, "PATH="+defaultImagePATH)
	}
	c.image = &img
	return &c
}

// Image is the root filesystem of s's jails; nil: the host's.
func (s *Sandbox) Image() *Image {
	if s == nil {
		return nil
	}
	return s.image
}

// ImageEnv is the base environment of nodes in s's jails: nil for the host
// jail (NodeEnv then starts from the host), the image's Env otherwise.
func (s *Sandbox) ImageEnv() []string {
	if im := s.Image(); im != nil {
		return im.Env
	}
	return nil
}

// maxSplitEntries bounds the entries of one split directory: each is a
// bind, and every bind costs each start.
const maxSplitEntries = 512

// splitTmpfsSize is the size of a split directory's tmpfs: it only holds
// mount points.
const splitTmpfsSize = 1 << 20

// dest is a mount point the jail needs in the image.
type dest struct {
	path string
	dir  bool   // a directory (else a file)
	link string // a symbolic link with this target
}

// imagePlan places a jail's mounts in an image.
type imagePlan struct {
	root  *os.File // the image tree, O_PATH
	path  string   // its host path
	split map[string][]string
}

// imageView is how one jail shows its image (imageMounts).
type imageView struct {
	mounts   []mount  // the image's, before every other mount
	jail     []mount  // the jail's own mounts, as the image takes them
	readOnly []string // directories to remount read-only once every mount is in
	links    []string // links of the jail's the image has already: bwrap makes none there
}

// imageMounts returns how j shows its image, ms being the jail's other
// mounts: the tree at "/" (or split), and the jail's mounts adjusted to
// it. A link of the jail's that the image has already, as it is, is left
// out (bwrap 0.8 refuses to make a link where one exists); the /var/tmp
// link to /tmp becomes a private tmpfs where the image has a real
// directory there (one mount, where the link would split /var). /dev is
// the image's own directory when it has every mount point and link of
// devArgs and /dev/shm (a tree of the store has), else a tmpfs of its
// own, made read-only once its devices are in.
func (j *Jail) imageMounts(ms []mount) (v imageView, err error) {
	im := j.Sandbox.image
	rf, err := openAt(unix.AT_FDCWD, im.Root, unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
	if err != nil {
		return v, fmt.Errorf("sandbox: image %s: %w", im.Name, err)
	}
	defer func() {
		if err != nil {
			closeMounts(v.mounts)
			v.mounts = nil
		}
	}()
	p := &imagePlan{root: rf, path: im.Root, split: map[string][]string{}}
	defer rf.Close()
	v.jail = p.adjust(ms)
	for _, d := range destinations(v.jail) {
		if err := p.place(d); err != nil {
			return v, err
		}
	}
	out := &v.mounts
	if _, ok := p.split["/"]; !ok {
		f, err := dupPath(rf)
		if err != nil {
			return v, err
		}
		*out = append(*out, mount{kind: mROBind, src: im.Root, dst: "/", fd: f})
	}
	dirs := slices.SortedFunc(func(yield func(string) bool) {
		for d := range p.split {
			if !yield(d) {
				return
			}
		}
	}, func(a, b string) int {
		if d := depth(a) - depth(b); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	for _, d := range dirs {
		if d != "/" {
			*out = append(*out, mount{kind: mSplit, dst: d})
			v.readOnly = append(v.readOnly, d)
		}
		if *out, err = p.entries(*out, d); err != nil {
			return v, err
		}
	}
	if links, ok := p.ownDev(); ok {
		v.links = append(v.links, links...)
	} else {
		*out = append(*out, mount{kind: mSplit, dst: "/dev"})
		v.readOnly = append(v.readOnly, "/dev")
	}
	if _, ok := p.split["/"]; ok {
		// bwrap's own root holds the split entries: read-only last.
		v.readOnly = append(v.readOnly, "/")
	}
	return v, nil
}

// adjust returns ms as the image takes them: without the links the image
// has as they are, and with a tmpfs for /var/tmp where the image has a
// directory there.
func (p *imagePlan) adjust(ms []mount) []mount {
	out := make([]mount, 0, len(ms))
	for _, m := range ms {
		if m.kind == mSymlink {
			if p.fits(dest{path: m.dst, link: m.src}) {
				continue
			}
			if m.dst == varTmp.Path && p.isDir(m.dst) {
				m = mount{kind: mTmpfs, dst: m.dst}
			}
		}
		out = append(out, m)
	}
	return out
}

// ownDev reports whether the image's /dev can be the jail's: a real
// directory with a regular file for every device of devNodes, each of
// devLinks as it is, and a directory /dev/shm. links are those links.
func (p *imagePlan) ownDev() (links []string, ok bool) {
	if !p.isDir("/dev") || !p.isDir("/dev/shm") {
		return nil, false
	}
	for _, mp := range devMountPoints() {
		if !p.fits(dest{path: mp.Path, link: mp.Link}) {
			return nil, false
		}
		if mp.Link != "" {
			links = append(links, mp.Path)
		}
	}
	return links, true
}

// namespaceArgs are a (Sandbox.namespaceArgs) without the links v has
// already.
func (v imageView) namespaceArgs(a []string) []string {
	if len(v.links) == 0 {
		return a
	}
	out := make([]string, 0, len(a))
	for i := 0; i < len(a); i++ {
		if a[i] == "--symlink" && i+2 < len(a) && slices.Contains(v.links, a[i+2]) {
			i += 2
			continue
		}
		out = append(out, a[i])
	}
	return out
}

// destinations are the mount points ms need in the image, and /proc and
// /dev: those of the outermost mounts (one within a directory mount of
// the jail is placed in that mount).
func destinations(ms []mount) []dest {
	out := []dest{{path: "/proc", dir: true}, {path: "/dev", dir: true}}
	var dirs []string
	for _, m := range ms {
		d := dest{path: m.dst, link: m.src}
		if m.kind != mSymlink {
			d.link = ""
			d.dir = isDirMount(m)
		}
		if d.dir {
			dirs = append(dirs, m.dst)
		}
		out = append(out, d)
	}
	return slices.DeleteFunc(out, func(d dest) bool {
		for _, o := range dirs {
			if o != d.path && within(d.path, o) {
				return true
			}
		}
		return within(d.path, "/dev") && d.path != "/dev"
	})
}

// isDirMount reports whether m mounts a directory.
func isDirMount(m mount) bool {
	switch m.kind {
	case mTmpfs, mMaskDir, mSplit:
		return true
	case mMaskFile, mSymlink, mData:
		return false
	}
	if m.fd == nil {
		return true
	}
	var st unix.Stat_t
	return unix.Fstat(int(m.fd.Fd()), &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR
}

// place makes d's mount point: nothing when the image has it as it must be,
// a split of the deepest real directory on its way otherwise.
func (p *imagePlan) place(d dest) error {
	if p.fits(d) {
		return nil
	}
	at, next := "/", ""
	for _, c := range strings.Split(strings.Trim(d.path, "/"), "/") {
		next = c
		if filepath.Join(at, c) == d.path || !p.isDir(filepath.Join(at, c)) {
			break
		}
		at = filepath.Join(at, c)
	}
	if next == "" {
		return fmt.Errorf("sandbox: image %s: no place for a mount at %s", p.path, d.path)
	}
	if !slices.Contains(p.split[at], next) {
		p.split[at] = append(p.split[at], next)
	}
	return nil
}

// fits reports whether the image has d's mount point as it must be,
// without a link on its way.
func (p *imagePlan) fits(d dest) bool {
	rel := strings.TrimPrefix(filepath.Clean(d.path), "/")
	if rel == "" {
		return false
	}
	if d.link != "" {
		dir, err := p.open(filepath.Dir(rel))
		if err != nil {
			return false
		}
		defer dir.Close()
		target, err := readlinkat(dir, filepath.Base(rel))
		return err == nil && target == d.link
	}
	f, err := p.open(rel)
	if err != nil {
		return false
	}
	defer f.Close()
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil {
		return false
	}
	if d.dir {
		return st.Mode&unix.S_IFMT == unix.S_IFDIR
	}
	return st.Mode&unix.S_IFMT == unix.S_IFREG
}

func (p *imagePlan) isDir(path string) bool {
	return p.fits(dest{path: path, dir: true})
}

// open opens rel in the image without following any link.
func (p *imagePlan) open(rel string) (*os.File, error) {
	return openAt(int(p.root.Fd()), rel, unix.RESOLVE_BENEATH|unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
}

// entries adds the mounts that show the image's entries of split
// directory dir, but those on the way to a mount point.
func (p *imagePlan) entries(out []mount, dir string) ([]mount, error) {
	rel := strings.TrimPrefix(dir, "/")
	if rel == "" {
		rel = "."
	}
	df, err := openDirBeneath(p.root, rel)
	if err != nil {
		return out, fmt.Errorf("sandbox: image %s: %s: %w", p.path, dir, err)
	}
	defer df.Close()
	names, err := df.Readdirnames(maxSplitEntries + 1)
	if err != nil && len(names) == 0 && !errors.Is(err, io.EOF) {
		return out, fmt.Errorf("sandbox: image %s: %s: %w", p.path, dir, err)
	}
	if len(names) > maxSplitEntries {
		return out, fmt.Errorf("sandbox: image %s: a mount at %s needs its %d+ entries bound one by one; "+
			"give the mount point a place in the image", p.path, dir, maxSplitEntries)
	}
	slices.Sort(names)
	for _, n := range names {
		if slices.Contains(p.split[dir], n) {
			continue
		}
		dst := filepath.Join(dir, n)
		var st unix.Stat_t
		if err := unix.Fstatat(int(df.Fd()), n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return out, fmt.Errorf("sandbox: image %s: %s: %w", p.path, dst, err)
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			target, err := readlinkat(df, n)
			if err != nil {
				return out, fmt.Errorf("sandbox: image %s: %s: %w", p.path, dst, err)
			}
			out = append(out, mount{kind: mSymlink, src: target, dst: dst})
		case unix.S_IFDIR, unix.S_IFREG:
			f, err := openAt(int(df.Fd()), n, unix.RESOLVE_BENEATH|unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
			if err != nil {
				return out, err
			}
			out = append(out, mount{kind: mROBind, src: filepath.Join(p.path, dst), dst: dst, fd: f})
		}
	}
	return out, nil
}

// openDirBeneath opens directory rel of root for reading its entries.
func openDirBeneath(root *os.File, rel string) (*os.File, error) {
	how := unix.OpenHow{Flags: unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	fd, err := unix.Openat2(int(root.Fd()), rel, &how)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), rel), nil
}

func readlinkat(dir *os.File, name string) (string, error) {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(int(dir.Fd()), name, buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// dupPath is another descriptor of f, for a bind that closes its own.
func dupPath(f *os.File) (*os.File, error) {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}

// systemDirs are the host directories s's jails show: none in an image.
func (s *Sandbox) systemDirs() []string {
	if s.image != nil {
		return nil
	}
	return systemDirs
}

// identityMounts show the jail's passwd and group over an image's, where
// the image has them as files (a mount point for them alone would split
// the image's /etc).
func (j *Jail) identityMounts(ms []mount) []mount {
	s := j.Sandbox
	if s.image == nil {
		return ms
	}
	rf, err := openAt(unix.AT_FDCWD, s.image.Root, unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
	if err != nil {
		return ms
	}
	defer rf.Close()
	p := &imagePlan{root: rf, path: s.image.Root}
	for _, name := range []string{"passwd", "group"} {
		dst := "/etc/" + name
		if !p.fits(dest{path: dst}) {
			continue
		}
		src := filepath.Join(s.etc, name)
		if f, err := openAt(unix.AT_FDCWD, src, unix.RESOLVE_NO_SYMLINKS); err == nil {
			ms = append(ms, mount{kind: mROBind, src: src, dst: dst, fd: f})
		}
	}
	return ms
}

// inImage reports whether p, an absolute path, is a regular file of the
// jail's image (resolved as the jail would: links within the image).
func (j *Jail) inImage(p string) bool {
	im := j.Sandbox.image
	if im == nil {
		return false
	}
	st, err := statInRoot(im.Root, p)
	return err == nil && st.Mode&unix.S_IFMT == unix.S_IFREG
}

// statInRoot stats p inside root, following links as if root were "/".
func statInRoot(root, p string) (unix.Stat_t, error) {
	var st unix.Stat_t
	rf, err := openAt(unix.AT_FDCWD, root, unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
	if err != nil {
		return st, err
	}
	defer rf.Close()
	f, err := openAt(int(rf.Fd()), strings.TrimPrefix(filepath.Clean(p), "/"), unix.RESOLVE_IN_ROOT|unix.RESOLVE_NO_MAGICLINKS)
	if err != nil {
		return st, err
	}
	defer f.Close()
	err = unix.Fstat(int(f.Fd()), &st)
	return st, err
}
