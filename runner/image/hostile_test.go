package image

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Hostile layers are refused, name the entry, and write nothing outside
// the store: not where they point, not even an image in the store.
func TestHostileLayersAreRefused(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("host"), 0o600); err != nil {
		t.Fatal(err)
	}
	escape := strings.Repeat("../", 40) + strings.TrimPrefix(outside, "/")
	for _, tc := range []struct {
		name   string
		layers [][]ent
		entry  string // named in the error
	}{
		{"dot-dot path", [][]ent{{file(escape+"/evil", "x")}}, escape + "/evil"},
		{"dot-dot inside the tree", [][]ent{{file("a/../b", "x")}}, "a/../b"},
		{"absolute path", [][]ent{{file(outside+"/evil", "x")}}, outside + "/evil"},
		{"absolute symlink, then a file through it", [][]ent{{symlink("etc", outside)}, {file("etc/passwd", "root::0:0::/:/bin/sh")}}, "etc/passwd"},
		{"same layer", [][]ent{{symlink("etc", outside), file("etc/passwd", "x")}}, "etc/passwd"},
		{"directory through a symlink", [][]ent{{symlink("etc", outside)}, {dir("etc/cron.d")}}, "etc/cron.d"},
		{"relative symlink escaping", [][]ent{{dir("a"), symlink("a/up", escape)}, {file("a/up/evil", "x")}}, "a/up/evil"},
		{"symlink within the tree is not followed either", [][]ent{{dir("usr/lib"), symlink("lib", "usr/lib")}, {file("lib/x", "x")}}, "lib/x"},
		{"symlink replacing a directory", [][]ent{{dir("etc")}, {symlink("etc", outside)}, {file("etc/evil", "x")}}, "etc/evil"},
		{"hard link to outside", [][]ent{{hardlink("h", escape+"/secret")}}, "h"},
		{"hard link to an absolute path", [][]ent{{hardlink("h", secret)}}, "h"},
		{"hard link through a symlink", [][]ent{{symlink("o", outside)}, {hardlink("h", "o/secret")}}, "h"},
		{"hard link to a missing file", [][]ent{{hardlink("h", "nowhere")}}, "h"},
		{"whiteout of dot-dot", [][]ent{{file("a/x", "1")}, {file("a/.wh..", "")}}, "a/.wh.."},
		{"whiteout through a symlink", [][]ent{{symlink("o", outside)}, {file("o/.wh.secret", "")}}, "o/.wh.secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := newRegistry(t)
			var layers []v1.Layer
			for _, l := range tc.layers {
				layers = append(layers, layer(t, l...))
			}
			ref := reg.push(t, "hostile:1", imageOf(t, testPlatform, layers...))
			s := openStore(t, t.TempDir(), Options{})
			_, err := pull(t, s, ref)
			if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), fmt.Sprintf("%q", tc.entry)) {
				t.Errorf("err = %v, want ErrUnsafe naming %q", err, tc.entry)
			}
			if diff := listTree(t, outside); diff != "secret = host" {
				t.Errorf("outside the store:\n%s", diff)
			}
			var st syscall.Stat_t
			if err := syscall.Stat(secret, &st); err != nil || st.Nlink != 1 {
				t.Errorf("the host file has %d links (%v), want 1", st.Nlink, err)
			}
			if got := images(t, s.root); len(got) != 0 {
				t.Errorf("images %v, want none", got)
			}
			assertEmpty(t, s.path(tmpDir))

			// The same without openat2 (old kernels, seccomp filters that
			// refuse it): one O_NOFOLLOW openat per element.
			u, err := newUnpacker(t.TempDir(), 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			defer u.close()
			u.t.openat2 = false
			err = nil
			for _, l := range tc.layers {
				if err = u.layer(context.Background(), bytes.NewReader(tarBytes(t, l...))); err != nil {
					break
				}
			}
			if !errors.Is(err, ErrUnsafe) {
				t.Errorf("without openat2: err = %v, want ErrUnsafe", err)
			}
			if diff := listTree(t, outside); diff != "secret = host" {
				t.Errorf("without openat2, outside the store:\n%s", diff)
			}
		})
	}
}

// Device nodes, fifos and sockets are dropped, not refused: a distribution's
// base layer often carries /dev entries.
func TestDeviceNodesDropped(t *testing.T) {
	reg := newRegistry(t)
	ref := reg.push(t, "dev:1", imageOf(t, testPlatform, layer(t,
		dir("dev"),
		ent{name: "dev/null", typ: tar.TypeChar},
		ent{name: "dev/sda", typ: tar.TypeBlock},
		ent{name: "run/fifo", typ: tar.TypeFifo},
		file("etc/hostname", "box"),
	)))
	got, err := pull(t, openStore(t, t.TempDir(), Options{}), ref)
	if err != nil {
		t.Fatal(err)
	}
	if tree := listTree(t, got.Root); tree != "dev/\netc/\netc/hostname = box" {
		t.Errorf("tree:\n%s", tree)
	}
	if got.Dropped != 3 {
		t.Errorf("Dropped = %d, want 3", got.Dropped)
	}
}

// A blob the registry serves under another blob's digest is refused, and
// the failed pull does not stay in the way of a good one.
func TestLyingBlobs(t *testing.T) {
	for _, which := range []string{"layer", "layer of another size", "config"} {
		t.Run(which, func(t *testing.T) {
			reg := newRegistry(t)
			img := imageOf(t, testPlatform, layer(t, file("good", "1")))
			ref := reg.push(t, "lie:1", img)
			var victim v1.Hash
			var body []byte
			switch which {
			case "layer":
				ls, _ := img.Layers()
				victim = mustDigest(t, ls[0])
				body = sameSizeLayer(t, ls[0])
			case "layer of another size":
				ls, _ := img.Layers()
				victim = mustDigest(t, ls[0])
				body = compressed(t, layer(t, file("evil", "a longer body")))
			case "config":
				victim, _ = img.ConfigName()
				raw, _ := img.RawConfigFile()
				body = bytes.Replace(raw, []byte(`"1000:1000"`), []byte(`"0000:0000"`), 1)
			}
			reg.lie(victim, body)
			s := openStore(t, t.TempDir(), Options{})
			_, err := pull(t, s, ref)
			if !errors.Is(err, ErrDigest) {
				t.Fatalf("err = %v, want ErrDigest", err)
			}
			if got := images(t, s.root); len(got) != 0 {
				t.Errorf("images %v, want none", got)
			}
			assertEmpty(t, s.path(tmpDir))

			reg.mu.Lock()
			delete(reg.lies, victim.String())
			reg.mu.Unlock()
			got, err := pull(t, s, ref)
			if err != nil {
				t.Fatal(err)
			}
			if tree := listTree(t, got.Root); tree != "good = 1" {
				t.Errorf("tree %q", tree)
			}
		})
	}
}

// sameSizeLayer is the layer's blob with another byte in the gzip header
// (the OS field, which decompression ignores): the same size and the same
// content, so that only the digest of the compressed blob tells.
func sameSizeLayer(t testing.TB, l v1.Layer) []byte {
	t.Helper()
	b := bytes.Clone(compressed(t, l))
	b[9] ^= 0xff
	return b
}

func compressed(t testing.TB, l v1.Layer) []byte {
	t.Helper()
	rc, err := l.Compressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A config whose diff IDs do not match the layers is refused by the
// store's own check (the compressed blobs are honest).
func TestDiffIDMismatch(t *testing.T) {
	reg := newRegistry(t)
	img := imageOf(t, testPlatform, layer(t, file("a", "1")))
	cf, _ := img.ConfigFile()
	cf = cf.DeepCopy()
	cf.RootFS.DiffIDs[0] = v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("ab", 32)}
	img, err := mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	ref := reg.push(t, "diffid:1", img)
	s := openStore(t, t.TempDir(), Options{})
	_, err = pull(t, s, ref)
	if !errors.Is(err, ErrDigest) || !strings.Contains(err.Error(), "uncompressed layer") {
		t.Errorf("err = %v, want ErrDigest for the uncompressed layer", err)
	}
	if got := images(t, s.root); len(got) != 0 {
		t.Errorf("images %v, want none", got)
	}
}

// A layer that inflates past MaxBytes stops at the cap: the unpacker reads
// at most one byte past it, and writes no more than it.
func TestBombStopsAtTheCap(t *testing.T) {
	const max = 1 << 20
	var hdr bytes.Buffer
	tw := tar.NewWriter(&hdr)
	if err := tw.WriteHeader(&tar.Header{Name: "zeros", Typeflag: tar.TypeReg, Mode: 0o644, Size: 1 << 40}); err != nil {
		t.Fatal(err)
	}
	stream := io.MultiReader(&hdr, zeros{})
	dir := t.TempDir()
	u, err := newUnpacker(dir, max)
	if err != nil {
		t.Fatal(err)
	}
	defer u.close()
	err = u.layer(context.Background(), stream)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	if u.streamed > max+1 {
		t.Errorf("read %d bytes, the cap is %d", u.streamed, max)
	}
	if n := diskBytes(t, dir); n > max {
		t.Errorf("%d bytes on disk, the cap is %d", n, max)
	}
}

// Through a registry: a gzip bomb (32 GiB of zeros in 32 MiB) is cut off
// after a little of the blob has been sent.
func TestBombFromRegistry(t *testing.T) {
	const members = 32 << 10 // × 1 MiB of zeros
	blob := gzipBomb(t, members)
	bomb := rawLayer{b: blob, diff: v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("0", 64)}}
	img := imageOf(t, testPlatform, layer(t, file("ok", "1")), bomb)
	reg := newRegistry(t)
	ref := reg.push(t, "bomb:1", img)
	reg.reset()
	// More than the blob, so that the manifest's sizes pass.
	s := openStore(t, t.TempDir(), Options{MaxBytes: 64 << 20})
	_, err := pull(t, s, ref)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "layer 2 of 2") {
		t.Fatalf("err = %v, want ErrTooLarge in layer 2", err)
	}
	digest := mustDigest(t, bomb)
	if n := reg.count("GET", digest.String()); n != 1 {
		t.Fatalf("the bomb was fetched %d times, want 1", n)
	}
	sent := reg.servedBytes(digest)
	if sent > int64(len(blob))/2 {
		t.Errorf("the registry sent %d of the bomb's %d bytes: the pull did not stop early", sent, len(blob))
	}
	t.Logf("the registry sent %d of the bomb's %d bytes (%d GiB uncompressed)", sent, len(blob), members>>10)
	if got := images(t, s.root); len(got) != 0 {
		t.Errorf("images %v, want none", got)
	}
	assertEmpty(t, s.path(tmpDir))
}

// An image whose layers are bigger compressed than the cap is refused
// before any layer is fetched.
func TestTooLargeByManifest(t *testing.T) {
	reg := newRegistry(t)
	ref := reg.push(t, "big:1", imageOf(t, testPlatform, layer(t, file("a", strings.Repeat("x", 4096)))))
	reg.reset()
	s := openStore(t, t.TempDir(), Options{MaxBytes: 64})
	_, err := pull(t, s, ref)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	if n := reg.count("GET", "/blobs/"); n != 1 {
		t.Errorf("%d blob fetches, want 1 (the config):\n%s", n, reg.log())
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// gzipBomb is a tar header for a huge file, then n gzip members of 1 MiB
// of zeros each (gzip readers read concatenated members as one stream).
func gzipBomb(t testing.TB, n int) []byte {
	t.Helper()
	member := func(b []byte) []byte {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zw.Write(b)
		zw.Close()
		return buf.Bytes()
	}
	var hdr bytes.Buffer
	tw := tar.NewWriter(&hdr)
	if err := tw.WriteHeader(&tar.Header{Name: "zeros", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(n) << 20}); err != nil {
		t.Fatal(err)
	}
	zero := member(make([]byte, 1<<20))
	out := member(hdr.Bytes())
	return append(out, bytes.Repeat(zero, n)...)
}

// rawLayer is a gzip blob taken as is, with a diff ID the test chooses.
type rawLayer struct {
	b    []byte
	diff v1.Hash
}

func (l rawLayer) Digest() (v1.Hash, error) {
	return v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%x", sha256.Sum256(l.b))}, nil
}
func (l rawLayer) DiffID() (v1.Hash, error) { return l.diff, nil }
func (l rawLayer) Compressed() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(l.b)), nil
}
func (l rawLayer) Uncompressed() (io.ReadCloser, error) {
	return gzip.NewReader(bytes.NewReader(l.b))
}
func (l rawLayer) Size() (int64, error)                { return int64(len(l.b)), nil }
func (l rawLayer) MediaType() (types.MediaType, error) { return types.OCILayer, nil }

// diskBytes is what the files under dir take on disk.
func diskBytes(t testing.TB, dir string) int64 {
	t.Helper()
	var n int64
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			n += fi.Sys().(*syscall.Stat_t).Blocks * 512
		}
		return nil
	})
	return n
}
