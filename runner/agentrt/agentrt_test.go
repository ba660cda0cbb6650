package agentrt

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// hostProgram is a dynamically linked program of the host.
func hostProgram(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no `true` on this host")
	}
	if info, err := readELF(p); err != nil || info.interp == "" {
		t.Skipf("%s is not a dynamically linked ELF program here (%v)", p, err)
	}
	return p
}

// readAt returns the NUL-terminated string at virtual address addr of f.
func stringAt(t *testing.T, f *elf.File, b []byte, addr uint64) string {
	t.Helper()
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && addr >= p.Vaddr && addr < p.Vaddr+p.Filesz {
			off := p.Off + addr - p.Vaddr
			s, _, _ := strings.Cut(string(b[off:]), "\x00")
			return s
		}
	}
	t.Fatalf("address %#x is not mapped from the file", addr)
	return ""
}

// A ported program names the new loader as its interpreter and carries a
// DT_RPATH entry whose string, where the loader reads it (DT_STRTAB plus
// the value, modulo 2^64), is $ORIGIN; the rest of the file is the
// original's.
func TestPortELF(t *testing.T) {
	src := hostProgram(t)
	dst := filepath.Join(t.TempDir(), "true")
	if err := portELF(src, dst, jailLoader); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	info, err := readELF(dst)
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := readELF(src)
	if diff := cmp.Diff([]any{info.interp, info.needed}, []any{jailLoader, orig.needed}); diff != "" {
		t.Errorf("the ported program's loader and libraries (-got +want):\n%s", diff)
	}
	var strtab, rpath uint64
	var haveRpath bool
	for _, p := range f.Progs {
		if p.Type != elf.PT_DYNAMIC {
			continue
		}
		for off := p.Off; off+16 <= p.Off+p.Filesz; off += 16 {
			switch elf.DynTag(binary.LittleEndian.Uint64(b[off:])) {
			case elf.DT_STRTAB:
				strtab = binary.LittleEndian.Uint64(b[off+8:])
			case elf.DT_RPATH:
				rpath, haveRpath = binary.LittleEndian.Uint64(b[off+8:]), true
			case elf.DT_DEBUG:
				t.Error("the ported program still has DT_DEBUG: it has only one")
			}
		}
	}
	if !haveRpath {
		t.Fatal("no DT_RPATH in the ported program")
	}
	if got := stringAt(t, f, b, strtab+rpath); got != rpathOrigin {
		t.Errorf("DT_RPATH reads %q, want %q", got, rpathOrigin)
	}
	srcB, _ := os.ReadFile(src)
	if len(srcB) != len(b) {
		t.Errorf("the ported program is %d bytes, the original %d", len(b), len(srcB))
	}
}

// A program whose PT_INTERP cannot hold the new loader's path and the
// library path is refused, saying so; so is a static program.
func TestPortELFRefuses(t *testing.T) {
	src := hostProgram(t)
	long := "/" + strings.Repeat("x", 64) + "/ld.so"
	err := portELF(src, filepath.Join(t.TempDir(), "p"), long)
	if err == nil || !strings.Contains(err.Error(), "cannot hold") {
		t.Errorf("port with a loader path too long: %v, want an error saying PT_INTERP cannot hold it", err)
	}
	static := filepath.Join(t.TempDir(), "static")
	writeStaticELF(t, static)
	err = portELF(static, filepath.Join(t.TempDir(), "p"), jailLoader)
	if err == nil || !strings.Contains(err.Error(), "not dynamically linked") {
		t.Errorf("port of a static program: %v, want an error", err)
	}
}

// writeStaticELF writes a minimal statically linked x86-64 program: an
// ELF header and one PT_LOAD, no PT_INTERP.
func writeStaticELF(t *testing.T, p string) {
	t.Helper()
	var buf bytes.Buffer
	h := elf.Header64{Type: uint16(elf.ET_EXEC), Machine: uint16(elf.EM_X86_64), Version: uint32(elf.EV_CURRENT),
		Entry: 0x400078, Phoff: 64, Ehsize: 64, Phentsize: 56, Phnum: 1}
	copy(h.Ident[:], elf.ELFMAG)
	h.Ident[elf.EI_CLASS], h.Ident[elf.EI_DATA], h.Ident[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	load := elf.Prog64{Type: uint32(elf.PT_LOAD), Flags: uint32(elf.PF_R | elf.PF_X), Vaddr: 0x400000, Paddr: 0x400000,
		Filesz: 0x80, Memsz: 0x80, Align: 0x1000}
	for _, v := range []any{h, load, [8]byte{}} {
		if err := binary.Write(&buf, binary.LittleEndian, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(p, buf.Bytes(), 0o755); err != nil {
		t.Fatal(err)
	}
	if info, err := readELF(p); err != nil || info.interp != "" {
		t.Fatalf("the static program reads as %+v, %v", info, err)
	}
}

// fakeRuntime makes a runtime directory: bin/node (the host's `true`, a
// dynamically linked program, standing for node), an npm script, a
// native CLI and a script of another interpreter under node_modules.
func fakeRuntime(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	prog, err := os.ReadFile(hostProgram(t))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"bin/node":                       string(prog),
		"node_modules/cli/bin/cli.js":    "#!/usr/bin/env node\nconsole.log(1)\n",
		"node_modules/native/bin/native": string(prog),
		"node_modules/py/bin/py":         "#!/usr/bin/env python3\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "node_modules", ".bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"cli": "../cli/bin/cli.js", "native": "../native/bin/native",
		"py": "../py/bin/py", "outside": "/bin/sh"} {
		if err := os.Symlink(target, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A runtime runs an npm script with its ported node, and a native CLI as
// a ported copy, each from the directory of its port, with node_modules
// at JailDir; a program it does not have, or that leads out of it, is
// not in it.
func TestInvocation(t *testing.T) {
	dir := fakeRuntime(t)
	cache := filepath.Join(t.TempDir(), "cache")
	r, err := New(dir, cache)
	if err != nil {
		t.Fatal(err)
	}
	modules := filepath.Join(dir, "node_modules")
	for _, tc := range []struct {
		name     string
		argv     []string
		ported   string // the program ported into the bound lib dir
		notThere bool
		wantErr  string
	}{
		{name: "cli", argv: []string{JailLib + "/node", JailDir + "/node_modules/cli/bin/cli.js"}, ported: "node"},
		{name: filepath.Join(modules, ".bin", "cli"), argv: []string{JailLib + "/node", JailDir + "/node_modules/cli/bin/cli.js"}, ported: "node"},
		{name: "native", argv: []string{JailLib + "/native"}, ported: "native"},
		{name: "py", wantErr: "not node"},
		{name: "outside", notThere: true},
		{name: "missing", notThere: true},
		{name: "/usr/bin/env", notThere: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv, err := r.Invocation(tc.name)
			switch {
			case tc.notThere:
				if !errors.Is(err, ErrNotInRuntime) {
					t.Errorf("Invocation: %v, want ErrNotInRuntime", err)
				}
				return
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("Invocation: %v, want an error saying %q", err, tc.wantErr)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if diff := cmp.Diff(inv.Argv, tc.argv); diff != "" {
				t.Errorf("argv (-got +want):\n%s", diff)
			}
			if len(inv.Binds) != 2 || inv.Binds[0].Src != modules || inv.Binds[0].Dst != JailDir+"/node_modules" ||
				inv.Binds[1].Dst != JailLib || !strings.HasPrefix(inv.Binds[1].Src, cache+"/") {
				t.Fatalf("binds = %+v, want node_modules and a port under the cache", inv.Binds)
			}
			lib := inv.Binds[1].Src
			for _, name := range []string{tc.ported, "ld.so", "libc.so.6"} {
				if fi, err := os.Stat(filepath.Join(lib, name)); err != nil || fi.Mode()&0o111 == 0 {
					t.Errorf("%s in the port: %v", name, err)
				}
			}
			if info, err := readELF(filepath.Join(lib, tc.ported)); err != nil || info.interp != jailLoader {
				t.Errorf("the port's interpreter is %q (%v), want %s", info.interp, err, jailLoader)
			}
			again, err := r.Invocation(tc.name)
			if err != nil || again.Binds[1].Src != lib {
				t.Errorf("a second Invocation ported again: %+v, %v", again, err)
			}
		})
	}
}

// Detect finds the runtime a CLI belongs to by its path, through links;
// New refuses a directory without bin/node.
func TestDetect(t *testing.T) {
	dir := fakeRuntime(t)
	link := filepath.Join(t.TempDir(), "cli")
	if err := os.Symlink(filepath.Join(dir, "node_modules", ".bin", "cli"), link); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{
		filepath.Join(dir, "node_modules", ".bin", "cli"): dir,
		link:              dir,
		"/bin/sh":         "",
		dir + "/bin/node": "",
	} {
		if got := Detect(p); got != want {
			t.Errorf("Detect(%s) = %q, want %q", p, got, want)
		}
	}
	if err := os.Remove(filepath.Join(dir, "bin", "node")); err != nil {
		t.Fatal(err)
	}
	if got := Detect(link); got != "" {
		t.Errorf("Detect without bin/node = %q, want none", got)
	}
	if _, err := New(dir, t.TempDir()); err == nil || !strings.Contains(err.Error(), "bin/node") {
		t.Errorf("New without bin/node: %v, want an error naming it", err)
	}
}

// Unfit refuses musl-based images and images without /bin/sh, and takes
// glibc-based ones and those with neither loader.
func TestUnfit(t *testing.T) {
	const glibc = "/lib64/ld-linux-x86-64.so.2"
	musl := "/lib/ld-musl-" + machine() + ".so.1"
	for _, tc := range []struct {
		name   string
		files  []string
		static bool // nothing ported: a static CLI
		want   string
	}{
		{name: "debian", files: []string{glibc, "/bin/sh"}},
		{name: "static", files: []string{"/bin/sh"}},
		{name: "alpine", files: []string{musl, "/bin/sh"}, want: "musl-based"},
		{name: "alpine, static CLI", files: []string{musl, "/bin/sh"}, static: true},
		{name: "musl and glibc", files: []string{musl, glibc, "/bin/sh"}},
		{name: "distroless", files: []string{glibc}, want: "no /bin/sh"},
		{name: "distroless, static CLI", files: []string{glibc}, static: true, want: "no /bin/sh"},
	} {
		has := func(p string) bool { return strings.Contains(strings.Join(tc.files, "\x00")+"\x00", p+"\x00") }
		inv := Invocation{Loader: glibc}
		if tc.static {
			inv.Loader = ""
		}
		got := Unfit(has, inv)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: Unfit = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// Porting a program that changed removes its copies unused for portIdle,
// keeps those used since (a jail may still run them), and a use of the
// current copy counts as one.
func TestPortSweepsStaleCopies(t *testing.T) {
	dir := fakeRuntime(t)
	cache := filepath.Join(t.TempDir(), "cache")
	stale, recent, other := filepath.Join(cache, "node-0000000000000000"), filepath.Join(cache, "node-1111111111111111"), filepath.Join(cache, "native-0000000000000000")
	for _, d := range []string{stale, recent, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-portIdle - time.Hour)
	for _, d := range []string{stale, other} {
		os.Chtimes(d, long, long)
	}
	short := time.Now().Add(-time.Hour)
	os.Chtimes(recent, short, short)
	r, err := New(dir, cache)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := r.Invocation("cli")
	if err != nil {
		t.Fatal(err)
	}
	current := inv.Binds[1].Src
	for d, want := range map[string]bool{stale: false, recent: true, other: true, current: true} {
		if _, err := os.Stat(d); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", filepath.Base(d), err == nil, want)
		}
	}
	os.Chtimes(current, long, long)
	if _, err := r.Invocation("cli"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(current); err != nil || time.Since(fi.ModTime()) > time.Minute {
		t.Errorf("a use of the current copy was not recorded: %v", err)
	}
}
