// Package imagetest builds small real images for tests from the host's own
// programs: a root filesystem holding a few programs with the shared
// libraries they load, packed as a one-layer image, served by a registry
// on loopback. Tests only: it reaches nothing outside the machine.
package imagetest

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"io"
	"io/fs"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Rootfs writes into dir a root filesystem holding the host programs
// progs (looked up in the host's usual directories) at their host paths,
// every shared library they load, /bin, /lib, ... as the host has them
// (links into /usr on a merged-/usr host), and an /etc with passwd and
// group. A program missing on the host skips the test.
func Rootfs(t testing.TB, dir string, progs ...string) {
	t.Helper()
	for _, d := range []string{"/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"} {
		if target, err := os.Readlink(d); err == nil {
			mustMkdirAll(t, filepath.Join(dir, filepath.Dir(d)))
			if err := os.Symlink(target, filepath.Join(dir, d)); err != nil {
				t.Fatal(err)
			}
		}
	}
	seen := map[string]bool{}
	for _, p := range progs {
		host := findHost(t, p)
		copyFile(t, dir, host, seen)
		if real, err := filepath.EvalSymlinks(host); err == nil && real != host {
			copyFile(t, dir, real, seen)
		}
		copyLibs(t, dir, host, seen)
	}
	mustMkdirAll(t, filepath.Join(dir, "etc"))
	for name, body := range map[string]string{
		"passwd": "root:x:0:0:root:/root:/bin/sh\n",
		"group":  "root:x:0:\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, "etc", name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// WriteFile writes a file of the image tree at dir.
func WriteFile(t testing.TB, dir, path, body string, mode os.FileMode) {
	t.Helper()
	p := filepath.Join(dir, path)
	mustMkdirAll(t, filepath.Dir(p))
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
}

func findHost(t testing.TB, prog string) string {
	t.Helper()
	if filepath.IsAbs(prog) {
		return prog
	}
	for _, d := range []string{"/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin"} {
		p := filepath.Join(d, prog)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	t.Skipf("%s is not on this host", prog)
	return ""
}

// copyFile copies host file p (a link as a link) to the same path under
// dir, through the host's links on the way: /bin/sh lands in usr/bin.
func copyFile(t testing.TB, dir, p string, seen map[string]bool) {
	t.Helper()
	parent, err := filepath.EvalSymlinks(filepath.Dir(p))
	if err != nil {
		t.Fatal(err)
	}
	p = filepath.Join(parent, filepath.Base(p))
	if seen[p] {
		return
	}
	seen[p] = true
	dst := filepath.Join(dir, p)
	mustMkdirAll(t, filepath.Dir(dst))
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, dst); err != nil {
			t.Fatal(err)
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(p), target)
		}
		copyFile(t, dir, target, seen)
		return
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, fi.Mode().Perm()); err != nil {
		t.Fatal(err)
	}
}

// copyLibs copies the interpreter and the libraries ELF program p loads,
// found where the host's dynamic linker looks.
func copyLibs(t testing.TB, dir, p string, seen map[string]bool) {
	t.Helper()
	f, err := elf.Open(p)
	if err != nil {
		return // a script
	}
	defer f.Close()
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			b, _ := io.ReadAll(prog.Open())
			interp := strings.TrimRight(string(b), "\x00")
			copyFile(t, dir, interp, seen)
		}
	}
	libs, _ := f.ImportedLibraries()
	for _, l := range libs {
		for _, d := range libDirs() {
			lp := filepath.Join(d, l)
			if _, err := os.Stat(lp); err == nil {
				if !seen[lp] {
					copyFile(t, dir, lp, seen)
					copyLibs(t, dir, lp, seen)
				}
				break
			}
		}
	}
}

func libDirs() []string {
	triple := map[string]string{"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu"}[runtime.GOARCH]
	return []string{"/lib/" + triple, "/usr/lib/" + triple, "/lib64", "/usr/lib64", "/lib", "/usr/lib"}
}

func mustMkdirAll(t testing.TB, d string) {
	t.Helper()
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
}

// Image packs the tree at dir as a one-layer image for this host's
// platform, with env as its configured environment.
func Image(t testing.TB, dir string, env []string) v1.Image {
	t.Helper()
	b := tarTree(t, dir)
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, l)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = runtime.GOOS, runtime.GOARCH
	cf.Config = v1.Config{Env: env}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatal(err)
	}
	return img
}

func tarTree(t testing.TB, dir string) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		var link string
		if fi.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		}
		h, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return err
		}
		h.Name, h.Uid, h.Gid, h.Uname, h.Gname = rel, 0, 0, "", ""
		if fi.IsDir() {
			h.Name += "/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			_, err = tw.Write(b)
			return err
		}
		return nil
	})
	if err == nil {
		err = tw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Registry is an OCI registry on loopback for the test's life; it returns
// its host:port.
func Registry(t testing.TB) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// Push pushes img as ref (host:port/repo:tag) and returns its digest.
func Push(t testing.TB, ref string, img v1.Image) string {
	t.Helper()
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}
