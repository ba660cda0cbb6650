package image

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// Whiteouts (OCI image spec, "Representing Changes"): ".wh.NAME" hides
// NAME of the lower layers, ".wh..wh..opq" hides everything the lower
// layers put in its directory. Other ".wh..wh." names are AUFS metadata.
const (
	whiteoutPrefix = ".wh."
	whiteoutMeta   = ".wh..wh."
	opaqueMarker   = ".wh..wh..opq"
)

// unpacker applies layers, in order, to a tree. It keeps the layers'
// regular files, directories, symbolic links and hard links within the
// tree; it drops device nodes, fifos and sockets, clears setuid and
// setgid bits, ignores owners and extended attributes (so no file
// capabilities either), and stops once MaxBytes have been read or
// written.
type unpacker struct {
	t   *tree
	w   *writers
	max int64
	buf []byte
	// async: regular files of at most this many bytes go to the writers'
	// goroutines; tests set -1 to write every one in place.
	async int64

	// filesOnly keeps only regular files and directories (an oci-archive's
	// layout, which is read through paths afterwards).
	filesOnly bool

	streamed int64 // uncompressed tar bytes read, all layers
	written  int64 // file content written, all layers
	dropped  int
	cleared  int

	// dirModes are the final modes of directories that lack owner rwx,
	// applied once every layer is in: until then the unpacker must be
	// able to write into them.
	dirModes map[string]uint32
	// touched holds the paths the current layer wrote and their parents:
	// whiteouts hide the lower layers only.
	touched map[string]bool
}

func newUnpacker(dir string, max int64) (*unpacker, error) {
	t, err := openTree(dir)
	if err != nil {
		return nil, err
	}
	return &unpacker{t: t, w: newWriters(), max: max, async: asyncFileSize, buf: make([]byte, 1<<20), dirModes: map[string]uint32{}}, nil
}

func (u *unpacker) close() {
	u.w.stop()
	u.t.close()
}

// layer applies one layer's uncompressed tar stream, then reads the
// stream to its end so that the digests computed over it cover it all.
// Every file of the layer is written when it returns.
func (u *unpacker) layer(ctx context.Context, r io.Reader) error {
	u.touched = map[string]bool{}
	cr := &capped{r: r, u: u}
	err := u.entries(ctx, tar.NewReader(cr))
	if werr := u.w.wait(); err == nil {
		err = werr
	}
	if err != nil {
		return err
	}
	_, err = io.CopyBuffer(writerOnly{io.Discard}, readerOnly{cr}, u.buf)
	return err
}

func (u *unpacker) entries(ctx context.Context, tr *tar.Reader) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := u.entry(h, tr); err != nil {
			if fe := (*fileError)(nil); errors.As(err, &fe) {
				return err // an earlier file's, named
			}
			return fmt.Errorf("entry %q: %w", h.Name, err)
		}
	}
}

// finish applies the directory modes held back, deepest first.
func (u *unpacker) finish() error {
	if err := u.w.wait(); err != nil {
		return err
	}
	paths := make([]string, 0, len(u.dirModes))
	for p := range u.dirModes {
		paths = append(paths, p)
	}
	sort.Slice(paths, func(i, j int) bool { return strings.Count(paths[i], "/") > strings.Count(paths[j], "/") })
	for _, p := range paths {
		dir, name := split(p)
		fd, err := u.t.dir(dir, false)
		if err == nil {
			err = chmodDir(fd, name, u.dirModes[p])
		}
		if err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("mode of %q: %w", p, err)
		}
	}
	return nil
}

func (u *unpacker) entry(h *tar.Header, r io.Reader) error {
	rel, err := cleanPath(h.Name)
	if err != nil || rel == "" {
		return err // "" is the root itself: its mode is ours
	}
	dir, name := split(rel)
	if u.w.meets(rel) {
		if err := u.w.wait(); err != nil {
			return err
		}
	}
	if strings.HasPrefix(name, whiteoutPrefix) {
		return u.whiteout(dir, name)
	}
	mode := uint32(h.Mode) & 0o7777
	if mode&(unix.S_ISUID|unix.S_ISGID) != 0 && (h.Typeflag == tar.TypeReg || h.Typeflag == tar.TypeGNUSparse || h.Typeflag == tar.TypeDir) {
		mode &^= unix.S_ISUID | unix.S_ISGID
		u.cleared++
	}
	switch {
	case h.Typeflag == tar.TypeDir:
		err = u.mkdir(dir, name, rel, mode)
	case h.Typeflag == tar.TypeReg || h.Typeflag == tar.TypeGNUSparse:
		err = u.file(dir, name, rel, mode, h, r)
	case h.Typeflag == tar.TypeSymlink && !u.filesOnly:
		err = u.symlink(dir, name, rel, h)
	case h.Typeflag == tar.TypeLink && !u.filesOnly:
		err = u.link(dir, name, rel, h.Linkname)
	case h.Typeflag == tar.TypeChar || h.Typeflag == tar.TypeBlock || h.Typeflag == tar.TypeFifo ||
		h.Typeflag == tar.TypeSymlink || h.Typeflag == tar.TypeLink:
		u.dropped++
		return nil
	default:
		return nil // PAX global headers and the like carry no file
	}
	if err == nil {
		u.touch(rel)
	}
	return err
}

// cleanPath turns a tar name into a path relative to the tree, refusing
// absolute paths and "..".
func cleanPath(name string) (string, error) {
	if strings.HasPrefix(name, "/") {
		return "", fmt.Errorf("%w: absolute path", ErrUnsafe)
	}
	parts := strings.Split(name, "/")
	out := parts[:0]
	for _, p := range parts {
		switch p {
		case "", ".":
			continue
		case "..":
			return "", fmt.Errorf("%w: \"..\" in the path", ErrUnsafe)
		}
		out = append(out, p)
	}
	return strings.Join(out, "/"), nil
}

func (u *unpacker) touch(rel string) {
	for !u.touched[rel] {
		u.touched[rel] = true
		dir, _ := split(rel)
		if dir == "" {
			return
		}
		rel = dir
	}
}

func (u *unpacker) mkdir(dir, name, rel string, mode uint32) error {
	fd, err := u.t.dir(dir, true)
	if err != nil {
		return err
	}
	exists, err := u.clear(fd, name, rel, true)
	if err != nil {
		return err
	}
	if !exists {
		if err := unix.Mkdirat(fd, name, 0o700); err != nil {
			return err
		}
	}
	if mode&0o700 == 0o700 {
		delete(u.dirModes, rel)
	} else {
		u.dirModes[rel] = mode
	}
	return chmodDir(fd, name, mode|0o700)
}

// chmodDir sets the mode of the directory name in fd, opened without
// following a link.
func chmodDir(fd int, name string, mode uint32) error {
	sub, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer unix.Close(sub)
	return unix.Fchmod(sub, mode)
}

// file writes a regular file: a small one by the writers' goroutines
// (see writers.go), a large one here, streamed.
func (u *unpacker) file(dir, name, rel string, mode uint32, h *tar.Header, r io.Reader) error {
	if h.Size > u.max-u.written {
		return u.tooLarge()
	}
	d, err := u.t.handle(dir, true)
	if err != nil {
		return err
	}
	if _, err := u.clear(d.fd, name, rel, false); err != nil {
		return err
	}
	j := &fileJob{dir: d, name: name, rel: rel, mode: mode, mtime: unix.NsecToTimespec(h.ModTime.UnixNano())}
	if h.Size <= u.async {
		j.data = u.w.buffer(int(h.Size))
		if _, err := io.ReadFull(r, *j.data); err != nil {
			u.w.bufs.Put(j.data)
			return err
		}
		u.written += h.Size
		j.dir.hold()
		return u.w.submit(j)
	}
	lr := &io.LimitedReader{R: r, N: u.max - u.written + 1}
	err = u.w.run(j, lr, u.buf)
	u.written += u.max - u.written + 1 - lr.N
	if err == nil && u.written > u.max {
		err = u.tooLarge()
	}
	return err
}

func (u *unpacker) symlink(dir, name, rel string, h *tar.Header) error {
	fd, err := u.t.dir(dir, true)
	if err != nil {
		return err
	}
	if _, err := u.clear(fd, name, rel, false); err != nil {
		return err
	}
	// The target is not checked: nothing here follows a link, and inside
	// the jail the image's root is "/".
	if err := unix.Symlinkat(h.Linkname, fd, name); err != nil {
		return err
	}
	return u.mtime(fd, name, h)
}

// link makes a hard link to a file already in the tree.
func (u *unpacker) link(dir, name, rel, linkname string) error {
	target, err := cleanPath(linkname)
	if err != nil {
		return fmt.Errorf("hard link to %q: %w", linkname, err)
	}
	if u.w.meets(target) {
		if err := u.w.wait(); err != nil {
			return err
		}
	}
	if target == rel {
		return nil
	}
	tdir, tname := split(target)
	tfd, err := u.t.open(tdir, false)
	if err != nil {
		return fmt.Errorf("hard link to %q: %w", linkname, err)
	}
	defer unix.Close(tfd)
	st, ok, err := lstat(tfd, tname)
	switch {
	case err != nil:
		return fmt.Errorf("hard link to %q: %w", linkname, err)
	case !ok:
		return fmt.Errorf("%w: hard link to %q, which is not in the image", ErrUnsafe, linkname)
	case isDir(st):
		return fmt.Errorf("%w: hard link to the directory %q", ErrUnsafe, linkname)
	}
	fd, err := u.t.dir(dir, true)
	if err != nil {
		return err
	}
	if _, err := u.clear(fd, name, rel, false); err != nil {
		return err
	}
	return unix.Linkat(tfd, tname, fd, name, 0)
}

// clear makes room for an entry: whatever is at name goes, except a
// directory where a directory comes (layers merge directories).
func (u *unpacker) clear(fd int, name, rel string, keepDir bool) (isDirectory bool, err error) {
	st, ok, err := lstat(fd, name)
	if err != nil || !ok {
		return false, err
	}
	if keepDir && isDir(st) {
		return true, nil
	}
	return false, u.remove(fd, name, rel)
}

func (u *unpacker) remove(fd int, name, rel string) error {
	if err := u.w.wait(); err != nil { // what goes may hold files being written
		return err
	}
	for p := range u.dirModes {
		if p == rel || strings.HasPrefix(p, rel+"/") {
			delete(u.dirModes, p)
		}
	}
	return u.t.remove(fd, name, rel)
}

func (u *unpacker) mtime(fd int, name string, h *tar.Header) error {
	ts := unix.NsecToTimespec(h.ModTime.UnixNano())
	return unix.UtimesNanoAt(fd, name, []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW)
}

func (u *unpacker) whiteout(dir, name string) error {
	if err := u.w.wait(); err != nil {
		return err
	}
	fd, err := u.t.dir(dir, false)
	if errors.Is(err, unix.ENOENT) {
		return nil // nothing below to hide
	}
	if err != nil {
		return err
	}
	if name == opaqueMarker {
		u.touch(dir)
		return u.opaque(dir)
	}
	if strings.HasPrefix(name, whiteoutMeta) {
		return nil
	}
	victim := strings.TrimPrefix(name, whiteoutPrefix)
	if victim == "" || victim == "." || victim == ".." {
		return fmt.Errorf("%w: whiteout of %q", ErrUnsafe, victim)
	}
	rel := join(dir, victim)
	if u.touched[rel] {
		return nil
	}
	return u.remove(fd, victim, rel)
}

// opaque empties dir of what the lower layers put there, keeping what this
// layer wrote (its entries may come before the marker).
func (u *unpacker) opaque(dir string) error {
	fd, err := u.t.open(dir, false)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	names, err := readNames(fd)
	if err != nil {
		return err
	}
	for _, n := range names {
		rel := join(dir, n)
		if !u.touched[rel] {
			if err := u.remove(fd, n, rel); err != nil {
				return err
			}
			continue
		}
		if st, ok, err := lstat(fd, n); err != nil {
			return err
		} else if ok && isDir(st) {
			if err := u.opaque(rel); err != nil {
				return err
			}
		}
	}
	return nil
}

func (u *unpacker) tooLarge() error {
	return fmt.Errorf("%w: more than %d bytes uncompressed", ErrTooLarge, u.max)
}

// capped counts the uncompressed bytes of every layer and fails past the
// cap, never reading more than one byte beyond it.
type capped struct {
	r io.Reader
	u *unpacker
}

func (c *capped) Read(p []byte) (int, error) {
	left := c.u.max - c.u.streamed
	if left < 0 {
		return 0, c.u.tooLarge()
	}
	if int64(len(p)) > left+1 {
		p = p[:left+1]
	}
	n, err := c.r.Read(p)
	c.u.streamed += int64(n)
	if c.u.streamed > c.u.max {
		return n, c.u.tooLarge()
	}
	return n, err
}

// readerOnly and writerOnly hide ReadFrom/WriteTo, so that io.CopyBuffer
// uses the unpacker's buffer.
type readerOnly struct{ io.Reader }
type writerOnly struct{ io.Writer }
