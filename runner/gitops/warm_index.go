package gitops

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"
)

// maxIndexBytes caps the index a reused worktree may bring: 200 bytes an
// entry for a million files.
const maxIndexBytes = 200 << 20

// Index entry flags (git's read-cache.c, format v2/v3).
const (
	flagAssumeValid = 0x8000
	flagExtended    = 0x4000
	flagStage       = 0x3000
	flagNameMask    = 0x0fff
	entryFixedBytes = 62 // stat data, mode, sizes, 20-byte id, flags
	sha1Bytes       = 20
)

// Modes of index entries.
const (
	modeFile    = 0o100644
	modeExec    = 0o100755
	modeSymlink = 0o120000
	modeGitlink = 0o160000
)

// indexEntry is one entry of a worktree's index: its path, mode, blob id
// and the stat data git recorded when it last saw the file agree with the
// blob (each field truncated to 32 bits, as git stores it).
type indexEntry struct {
	path                      string
	ctimeSec, ctimeNsec       uint32
	mtimeSec, mtimeNsec       uint32
	ino, mode, uid, gid, size uint32
	oid                       [sha1Bytes]byte
}

// workIndex is a worktree's index as scrub reads it.
type workIndex struct {
	entries []indexEntry // in the index's order (sorted by path)
	// cacheTree is the body of the cache tree extension ("TREE"), if any.
	cacheTree []byte
	// mtime is the index file's modification time: git's racily clean
	// entries are the ones modified then or later.
	mtime time.Time
	// file is the index, open: see closeLater.
	file *os.File
}

// readIndex reads the index at p, which it leaves open, and says why a warm worktree cannot
// keep it: a reused worktree keeps its index (its stat data is what spares
// rewriting unchanged files), so the index must hold nothing a fresh
// checkout's would not. Only format 2 and 3 with SHA-1 ids are read; every
// entry must be a plain stage-0 file, symlink or gitlink on a path git
// itself would check out, without the assume-unchanged, skip-worktree or
// intent-to-add bits (reset --hard honours the first two and would leave
// such files as a node left them); the only extension allowed is the
// cache tree, which must agree with the entries (see checkCacheTree).
// Anything else (split index, untracked cache, sparse index, format 4) is
// refused, not understood.
func readIndex(p string) (*workIndex, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	idx, err := readIndexFile(p, f)
	if err != nil {
		f.Close()
		return nil, err
	}
	idx.file = f
	return idx, nil
}

func readIndexFile(p string, f *os.File) (*workIndex, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxIndexBytes {
		return nil, fmt.Errorf("index %s is not a regular file under %d bytes", p, maxIndexBytes)
	}
	// git replaces the index by rename: the file open here does not
	// change while it is read.
	b := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	idx, err := parseIndex(b)
	if err != nil {
		return nil, err
	}
	idx.mtime = fi.ModTime()
	return idx, nil
}

// closeLater closes f in the background. The index read at the start of a
// scrub is replaced by git's rename while it is open here, so its blocks
// are freed when it is closed, not inside git: some filesystems (ext4
// mounted with discard) discard freed blocks synchronously, 1.5 MB for
// 20,000 files.
func closeLater(f *os.File) {
	go f.Close()
}

func parseIndex(b []byte) (*workIndex, error) {
	if len(b) < 12+sha1Bytes || string(b[:4]) != "DIRC" {
		return nil, fmt.Errorf("index: no index header")
	}
	version := binary.BigEndian.Uint32(b[4:8])
	if version != 2 && version != 3 {
		return nil, fmt.Errorf("index: format version %d (only 2 and 3 are kept)", version)
	}
	n := binary.BigEndian.Uint32(b[8:12])
	body := b[:len(b)-sha1Bytes]
	if uint64(n) > uint64(len(body)/entryFixedBytes) {
		return nil, fmt.Errorf("index: %d entries in %d bytes", n, len(body))
	}
	idx := &workIndex{entries: make([]indexEntry, n)}
	text := string(body) // the entries' paths are slices of one copy
	off := 12
	for i := range idx.entries {
		next, err := readEntry(body, text, off, version, &idx.entries[i])
		if err != nil {
			return nil, fmt.Errorf("index entry %d: %w", i, err)
		}
		off = next
	}
	tree, err := checkExtensions(body[off:])
	if err != nil {
		return nil, err
	}
	idx.cacheTree = tree
	return idx, nil
}

// readEntry checks the entry at off of b (text is b as a string), stores
// it in e and returns the offset of the next.
func readEntry(b []byte, text string, off int, version uint32, e *indexEntry) (int, error) {
	if off+entryFixedBytes > len(b) {
		return 0, fmt.Errorf("truncated")
	}
	be := binary.BigEndian
	flags := be.Uint16(b[off+60 : off+62])
	fixed := entryFixedBytes
	if flags&flagExtended != 0 {
		if version < 3 || off+fixed+2 > len(b) {
			return 0, fmt.Errorf("extended flags in a version %d index", version)
		}
		if ext := be.Uint16(b[off+62 : off+64]); ext != 0 {
			return 0, fmt.Errorf("skip-worktree or intent-to-add set (flags %#x)", ext)
		}
		fixed += 2
	}
	if flags&flagAssumeValid != 0 {
		return 0, fmt.Errorf("assume-unchanged set")
	}
	if flags&flagStage != 0 {
		return 0, fmt.Errorf("unmerged entry")
	}
	nameEnd := bytes.IndexByte(b[off+fixed:], 0)
	if nameEnd < 0 {
		return 0, fmt.Errorf("truncated name")
	}
	name := text[off+fixed : off+fixed+nameEnd]
	if l := int(flags & flagNameMask); l < flagNameMask && l != len(name) {
		return 0, fmt.Errorf("name length %d does not match %q", l, name)
	}
	*e = indexEntry{path: name,
		ctimeSec: be.Uint32(b[off:]), ctimeNsec: be.Uint32(b[off+4:]),
		mtimeSec: be.Uint32(b[off+8:]), mtimeNsec: be.Uint32(b[off+12:]),
		ino: be.Uint32(b[off+20:]), mode: be.Uint32(b[off+24:]),
		uid: be.Uint32(b[off+28:]), gid: be.Uint32(b[off+32:]), size: be.Uint32(b[off+36:])}
	copy(e.oid[:], b[off+40:off+60])
	if err := checkEntryPath(name, e.mode); err != nil {
		return 0, err
	}
	// Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
	size := (fixed + nameEnd + 8) &^ 7
	if off+size > len(b) {
		return 0, fmt.Errorf("truncated padding")
	}
	return off + size, nil
}

// checkEntryPath refuses what git's verify_path would never check out.
func checkEntryPath(name string, mode uint32) error {
	switch mode {
	case modeFile, modeExec, modeSymlink, modeGitlink:
	default:
		return fmt.Errorf("%q: mode %o", name, mode)
	}
	for rest := name; ; {
		part, more, found := strings.Cut(rest, "/")
		if part == "" || part == "." || part == ".." {
			return fmt.Errorf("%q: not a clean relative path", name)
		}
		if len(part) == 4 && strings.EqualFold(part, ".git") {
			return fmt.Errorf("%q: path component %q", name, part)
		}
		if !found {
			return nil
		}
		rest = more
	}
}

// checkExtensions allows only the cache tree ("TREE") and returns its
// body.
func checkExtensions(b []byte) ([]byte, error) {
	var tree []byte
	for len(b) > 0 {
		if len(b) < 8 {
			return nil, fmt.Errorf("index: truncated extension")
		}
		sig, size := string(b[:4]), binary.BigEndian.Uint32(b[4:8])
		if sig != "TREE" || tree != nil {
			return nil, fmt.Errorf("index: extension %q", sig)
		}
		if uint64(size) > uint64(len(b)-8) {
			return nil, fmt.Errorf("index: truncated extension %q", sig)
		}
		tree = b[8 : 8+int(size)]
		b = b[8+int(size):]
	}
	return tree, nil
}
