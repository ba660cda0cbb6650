package agentrt

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// rpathOrigin is the library path of a ported program: the directory it
// is in, which holds its loader and libraries.
const rpathOrigin = "$ORIGIN"

// elfInfo is what porting needs to know of a dynamically linked program.
type elfInfo struct {
	interp string   // the loader it names (PT_INTERP)
	needed []string // its DT_NEEDED libraries
}

// readELF reads p's loader and libraries; interp is "" for a static
// program.
func readELF(p string) (elfInfo, error) {
	f, err := elf.Open(p)
	if err != nil {
		return elfInfo{}, err
	}
	defer f.Close()
	var info elfInfo
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			b, err := io.ReadAll(prog.Open())
			if err != nil {
				return info, fmt.Errorf("%s: read PT_INTERP: %w", p, err)
			}
			info.interp, _, _ = strings.Cut(string(b), "\x00") // as the kernel reads it
		}
	}
	if info.interp == "" {
		return info, nil
	}
	if info.needed, err = f.ImportedLibraries(); err != nil {
		return info, fmt.Errorf("%s: %w", p, err)
	}
	return info, nil
}

// portELF writes to dst a copy of the dynamically linked program src
// that loads with interp (an absolute path in the jail, the copy of the
// host's loader beside dst) and finds its libraries beside itself, in
// whatever root it runs: its PT_INTERP names interp, and its DT_DEBUG
// entry (a slot the loader only writes the debugger's pointer into)
// becomes a DT_RPATH of $ORIGIN. Both strings go where the old loader's
// name was (the loader reads the path from the mapped PT_INTERP), so the
// file keeps its layout; a program whose PT_INTERP is too short for them,
// or that has no DT_DEBUG, cannot be ported. The kernel starts the copy
// itself, so /proc/self/exe (a runtime's process.execPath) is the copy
// and a child it starts the same way loads the same way: no variable
// such as LD_LIBRARY_PATH reaches the programs the agent starts.
func portELF(src, dst, interp string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	f, err := elf.NewFile(in)
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	if f.Class != elf.ELFCLASS64 || f.Data != elf.ELFDATA2LSB {
		return fmt.Errorf("%s: only 64-bit little-endian programs are ported", src)
	}
	var interpSeg, dyn *elf.Prog
	for _, p := range f.Progs {
		switch p.Type {
		case elf.PT_INTERP:
			interpSeg = p
		case elf.PT_DYNAMIC:
			dyn = p
		}
	}
	if interpSeg == nil || dyn == nil {
		return fmt.Errorf("%s is not dynamically linked", src)
	}
	strs := interp + "\x00" + rpathOrigin + "\x00"
	if uint64(len(strs)) > interpSeg.Filesz || !mapped(f, interpSeg) {
		return fmt.Errorf("%s: its PT_INTERP (%d bytes, unmapped or too short) cannot hold %q", src, interpSeg.Filesz, strs)
	}
	// Only the dynamic section is read whole: a program (Claude Code's is
	// hundreds of megabytes) is copied as a stream and patched in place.
	dynBytes := make([]byte, dyn.Filesz)
	if _, err := in.ReadAt(dynBytes, int64(dyn.Off)); err != nil {
		return fmt.Errorf("%s: dynamic section: %w", src, err)
	}
	strtab, debugAt, err := dynamicSlots(dynBytes)
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	region := make([]byte, interpSeg.Filesz)
	copy(region, strs)
	// The loader adds the entry's value to DT_STRTAB's address, modulo
	// 2^64: the string may lie below the string table.
	rpath := interpSeg.Vaddr + uint64(len(interp)+1) - strtab
	entry := make([]byte, 16)
	binary.LittleEndian.PutUint64(entry, uint64(elf.DT_RPATH))
	binary.LittleEndian.PutUint64(entry[8:], rpath)
	if _, err := in.Seek(0, io.SeekStart); err != nil {
		return err
	}
	return writeNew(dst, 0o755, func(out *os.File) error {
		if _, err := io.Copy(out, in); err != nil {
			return err
		}
		if _, err := out.WriteAt(region, int64(interpSeg.Off)); err != nil {
			return err
		}
		_, err := out.WriteAt(entry, int64(dyn.Off+debugAt))
		return err
	})
}

// mapped reports whether segment p's bytes are part of a PT_LOAD.
func mapped(f *elf.File, p *elf.Prog) bool {
	for _, l := range f.Progs {
		if l.Type == elf.PT_LOAD && p.Off >= l.Off && p.Off+p.Filesz <= l.Off+l.Filesz &&
			p.Vaddr-l.Vaddr == p.Off-l.Off {
			return true
		}
	}
	return false
}

// dynamicSlots finds, in dyn (a dynamic section's bytes), DT_STRTAB's
// address and the offset in dyn of the DT_DEBUG entry; it refuses a
// program that already has a library path of its own.
func dynamicSlots(dyn []byte) (strtab uint64, debugAt uint64, err error) {
	haveStrtab, haveDebug := false, false
	for off := 0; off+16 <= len(dyn); off += 16 {
		tag := elf.DynTag(binary.LittleEndian.Uint64(dyn[off:]))
		val := binary.LittleEndian.Uint64(dyn[off+8:])
		if tag == elf.DT_NULL {
			break
		}
		switch tag {
		case elf.DT_STRTAB:
			strtab, haveStrtab = val, true
		case elf.DT_DEBUG:
			if !haveDebug {
				debugAt, haveDebug = uint64(off), true
			}
		case elf.DT_RPATH, elf.DT_RUNPATH:
			return 0, 0, errors.New("it has a library path of its own (DT_RPATH or DT_RUNPATH)")
		}
	}
	switch {
	case !haveStrtab:
		return 0, 0, errors.New("no DT_STRTAB")
	case !haveDebug:
		return 0, 0, errors.New("no DT_DEBUG entry to hold the library path")
	}
	return strtab, debugAt, nil
}

// libDirs are where the host's loader finds libraries by default.
func libDirs() []string {
	triple := machine() + "-linux-gnu"
	return []string{"/lib/" + triple, "/usr/lib/" + triple, "/lib64", "/usr/lib64", "/lib", "/usr/lib"}
}

// libClosure finds on the host every library the programs load, by name,
// transitively, except their loader (ported separately).
func libClosure(needed []string) (map[string]string, error) {
	out := map[string]string{}
	todo := append([]string(nil), needed...)
	for len(todo) > 0 {
		name := todo[0]
		todo = todo[1:]
		if _, ok := out[name]; ok || strings.HasPrefix(name, "ld-linux") {
			continue
		}
		p, err := findLib(name)
		if err != nil {
			return nil, err
		}
		out[name] = p
		libs, err := importedLibraries(p)
		if err != nil {
			return nil, err
		}
		todo = append(todo, libs...)
	}
	return out, nil
}

func importedLibraries(p string) ([]string, error) {
	f, err := elf.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ImportedLibraries()
}

func findLib(name string) (string, error) {
	for _, d := range libDirs() {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", fmt.Errorf("library %s not found on this host (in %s)", name, strings.Join(libDirs(), ", "))
}

// writeNew makes p, which must not exist yet, with mode, from what write
// puts in it; p is removed again when write fails. fill writes into a
// directory of its own that is published whole by one rename, so no
// file needs a rename of its own.
func writeNew(p string, mode os.FileMode, write func(*os.File) error) error {
	out, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	err = out.Chmod(mode) // whatever the umask
	if err == nil {
		err = write(out)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(p)
	}
	return err
}
