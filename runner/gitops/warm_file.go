package gitops

import (
	"bytes"
	"crypto/sha1"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// unchanged says whether name in the directory fd (at key, with stat
// data st) is what the index entry e recorded and may stay; a gitlink's
// directory is emptied and stays.
func (t *tidier) unchanged(fd int, name string, key []byte, st *unix.Stat_t, e *indexEntry) (bool, error) {
	typ := st.Mode & unix.S_IFMT
	switch e.mode {
	case modeGitlink:
		if typ != unix.S_IFDIR {
			return false, nil
		}
		return true, t.subdir(fd, name, string(key), st, t.empty)
	case modeSymlink:
		if typ != unix.S_IFLNK {
			return false, nil
		}
	default:
		if st.Mode != unix.S_IFREG|t.perm[e.mode] || st.Nlink != 1 {
			return false, nil
		}
	}
	if !sameStat(st, e) {
		return false, nil
	}
	if time.Unix(int64(e.mtimeSec), int64(e.mtimeNsec)).Before(t.racy) {
		return true, nil
	}
	body, same, err := t.content(fd, name, string(key), st)
	if err != nil || !same {
		return false, err
	}
	return gitBlobID(body) == e.oid, nil
}

// sameStat compares st with the stat data git recorded in e, as git does
// but to the nanosecond: a file whose content, mode or links changed has
// a new ctime, which no unprivileged process can set.
func sameStat(st *unix.Stat_t, e *indexEntry) bool {
	return uint32(st.Ctim.Sec) == e.ctimeSec && uint32(st.Ctim.Nsec) == e.ctimeNsec &&
		uint32(st.Mtim.Sec) == e.mtimeSec && uint32(st.Mtim.Nsec) == e.mtimeNsec &&
		uint32(st.Ino) == e.ino && st.Uid == e.uid && st.Gid == e.gid && uint32(st.Size) == e.size
}

// content reads the file or symlink target name of fd (at p, with stat
// data st); same is false when name is no longer that file.
func (t *tidier) content(fd int, name, p string, st *unix.Stat_t) (body []byte, same bool, err error) {
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		target, err := t.root.Readlink(p)
		return []byte(target), err == nil, err
	}
	cfd, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false, fmt.Errorf("open %s: %w", p, err)
	}
	f := os.NewFile(uintptr(cfd), p)
	defer f.Close()
	var now unix.Stat_t
	if err := unix.Fstat(cfd, &now); err != nil {
		return nil, false, fmt.Errorf("stat %s: %w", p, err)
	}
	if now.Ino != st.Ino || now.Dev != st.Dev || now.Size != st.Size {
		return nil, false, nil
	}
	var b bytes.Buffer
	b.Grow(int(st.Size))
	if _, err := io.Copy(&b, io.LimitReader(f, st.Size+1)); err != nil {
		return nil, false, fmt.Errorf("read %s: %w", p, err)
	}
	return b.Bytes(), true, nil
}

// gitBlobID is the id git gives a blob of content b.
func gitBlobID(b []byte) [sha1Bytes]byte {
	h := sha1.New()
	h.Write(strconv.AppendInt([]byte("blob "), int64(len(b)), 10))
	h.Write([]byte{0})
	h.Write(b)
	var id [sha1Bytes]byte
	h.Sum(id[:0])
	return id
}

// empty removes everything in the directory j: a gitlink's, which a fresh
// checkout leaves empty.
func (t *tidier) empty(j dirJob) {
	f := os.NewFile(uintptr(j.fd), j.rel)
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		t.fail(fmt.Errorf("read directory %q: %w", j.rel, err))
		return
	}
	for _, n := range names {
		if err := t.remove(j.rel + "/" + n); err != nil {
			t.fail(err)
			return
		}
	}
}
