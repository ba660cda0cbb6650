package gitops

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path"
	"strings"
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

// checkIndex reads the index at path and says why a warm worktree cannot
// keep it: a reused worktree keeps its index (its stat data is what spares
// rewriting unchanged files), so the index must hold nothing a fresh
// checkout's would not. Only format 2 and 3 with SHA-1 ids are read; every
// entry must be a plain stage-0 file, symlink or gitlink on a path git
// itself would check out, without the assume-unchanged, skip-worktree or
// intent-to-add bits (reset --hard honours the first two and would leave
// such files as a node left them); the only extension allowed is the
// cache tree, which reset --hard rebuilds. Anything else (split index,
// untracked cache, sparse index, format 4) is refused, not understood.
func checkIndex(p string) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxIndexBytes {
		return fmt.Errorf("index %s is not a regular file under %d bytes", p, maxIndexBytes)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	return parseIndex(b)
}

func parseIndex(b []byte) error {
	if len(b) < 12+sha1Bytes || string(b[:4]) != "DIRC" {
		return fmt.Errorf("index: no index header")
	}
	version := binary.BigEndian.Uint32(b[4:8])
	if version != 2 && version != 3 {
		return fmt.Errorf("index: format version %d (only 2 and 3 are kept)", version)
	}
	n := binary.BigEndian.Uint32(b[8:12])
	body := b[:len(b)-sha1Bytes]
	off := 12
	for i := uint32(0); i < n; i++ {
		next, err := checkEntry(body, off, version)
		if err != nil {
			return fmt.Errorf("index entry %d: %w", i, err)
		}
		off = next
	}
	return checkExtensions(body[off:])
}

// checkEntry checks the entry at off and returns the offset of the next.
func checkEntry(b []byte, off int, version uint32) (int, error) {
	if off+entryFixedBytes > len(b) {
		return 0, fmt.Errorf("truncated")
	}
	mode := binary.BigEndian.Uint32(b[off+24 : off+28])
	flags := binary.BigEndian.Uint16(b[off+60 : off+62])
	fixed := entryFixedBytes
	if flags&flagExtended != 0 {
		if version < 3 || off+fixed+2 > len(b) {
			return 0, fmt.Errorf("extended flags in a version %d index", version)
		}
		if ext := binary.BigEndian.Uint16(b[off+62 : off+64]); ext != 0 {
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
	name := string(b[off+fixed : off+fixed+nameEnd])
	if l := int(flags & flagNameMask); l < flagNameMask && l != len(name) {
		return 0, fmt.Errorf("name length %d does not match %q", l, name)
	}
	if err := checkEntryPath(name, mode); err != nil {
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
	case 0o100644, 0o100755, 0o120000, 0o160000:
	default:
		return fmt.Errorf("%q: mode %o", name, mode)
	}
	if name == "" || strings.HasPrefix(name, "/") || path.Clean(name) != name {
		return fmt.Errorf("%q: not a clean relative path", name)
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." || strings.EqualFold(part, ".git") {
			return fmt.Errorf("%q: path component %q", name, part)
		}
	}
	return nil
}

// checkExtensions allows only the cache tree ("TREE").
func checkExtensions(b []byte) error {
	for len(b) > 0 {
		if len(b) < 8 {
			return fmt.Errorf("index: truncated extension")
		}
		sig, size := string(b[:4]), binary.BigEndian.Uint32(b[4:8])
		if sig != "TREE" {
			return fmt.Errorf("index: extension %q", sig)
		}
		if uint64(size) > uint64(len(b)-8) {
			return fmt.Errorf("index: truncated extension %q", sig)
		}
		b = b[8+int(size):]
	}
	return nil
}
