package imagetest

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// baseRepo is where scripts/install-podman.sh puts the Debian base it
// builds with debootstrap (KILROY_IMAGE_RUNTIME_BASE).
const baseRepo = "localhost/kilroy-ci/debian"

// bases holds, per test binary, the oci-archive of each podman image
// saved so far, by reference.
var bases sync.Map // ref → *baseOnce

type baseOnce struct {
	once    sync.Once
	archive string
	skip    string // why the image cannot be had here
	err     error
}

// DebianBase is the Debian base image scripts/install-podman.sh builds
// (KILROY_IMAGE_RUNTIME_BASE; else the one podman has under
// localhost/kilroy-ci/debian), as podman saves it (`podman save --format
// oci-archive`), once per test binary and kept in the user's cache dir
// under its image ID, so later binaries only ask podman the ID. It
// returns the image and the archive's path. It skips where podman is not
// installed or has no such image, saying how to get one; on CI (CI=true)
// that is an error instead, since .ci/run installs podman.
func DebianBase(t testing.TB) (v1.Image, string) {
	t.Helper()
	ref := os.Getenv("KILROY_IMAGE_RUNTIME_BASE")
	o, _ := bases.LoadOrStore(ref, &baseOnce{})
	b := o.(*baseOnce)
	b.once.Do(func() { b.archive, b.skip, b.err = saveBase(ref) })
	switch {
	case b.err != nil:
		t.Fatalf("the podman Debian base: %v", b.err)
	case b.skip != "" && os.Getenv("CI") == "true":
		t.Fatalf("the podman Debian base: %s", b.skip)
	case b.skip != "":
		t.Skip(b.skip)
	}
	img, err := archiveImage(b.archive)
	if err != nil {
		t.Fatalf("the podman Debian base %s: %v", b.archive, err)
	}
	return img, b.archive
}

const howToGetBase = "run `eval \"$(bash scripts/install-podman.sh)\"` (as root) to build it"

// saveBase saves the base once into the cache, keyed by its image ID.
func saveBase(ref string) (archive, skip string, err error) {
	if _, err := exec.LookPath("podman"); err != nil {
		return "", "podman is not installed, so there is no Debian base image to build test images on: " + howToGetBase, nil
	}
	if ref == "" {
		out, err := exec.Command("podman", "images", "--format", "{{.Repository}}:{{.Tag}}", baseRepo).Output()
		if fields := strings.Fields(string(out)); err == nil && len(fields) > 0 {
			ref = fields[0]
		} else {
			return "", fmt.Sprintf("podman has no %s image and KILROY_IMAGE_RUNTIME_BASE is not set: %s", baseRepo, howToGetBase), nil
		}
	}
	out, err := exec.Command("podman", "image", "inspect", "--format", "{{.Id}}", ref).Output()
	id := strings.TrimSpace(string(out))
	if err != nil || id == "" {
		return "", fmt.Sprintf("podman has no image %s: %s", ref, howToGetBase), nil
	}
	dir, err := CacheDir()
	if err != nil {
		return "", "", err
	}
	archive = filepath.Join(dir, "base-"+id+".oci.tar")
	if _, err := os.Stat(archive); err == nil {
		return archive, "", nil
	}
	tmp := archive + fmt.Sprintf(".%d.part", os.Getpid())
	defer os.Remove(tmp)
	if out, err := exec.Command("podman", "save", "--format", "oci-archive", "-o", tmp, ref).CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("podman save %s: %v: %s", ref, err, out)
	}
	return archive, "", os.Rename(tmp, archive)
}

// CacheDir is where test images and layers are kept between test runs:
// kilroy-bot/test-images under the user's cache dir.
func CacheDir() (string, error) {
	c, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(c, "kilroy-bot", "test-images")
	return dir, os.MkdirAll(dir, 0o755)
}

// archiveImage reads the one image of an oci-archive (a tar of an OCI
// layout written by podman, trusted), unpacked once beside it.
func archiveImage(archive string) (v1.Image, error) {
	dir := strings.TrimSuffix(archive, ".tar")
	if _, err := os.Stat(filepath.Join(dir, "index.json")); err != nil {
		if err := untarLayout(archive, dir); err != nil {
			return nil, err
		}
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(m.Manifests) != 1 {
		return nil, fmt.Errorf("%s holds %d images, want 1", archive, len(m.Manifests))
	}
	return idx.Image(m.Manifests[0].Digest)
}

func untarLayout(archive, dir string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".part")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		p := filepath.Join(tmp, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(p, 0o755)
		case tar.TypeReg:
			err = writeFrom(p, tr)
		}
		if err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(filepath.Join(dir, "index.json")); statErr != nil {
			return err // not another test binary's copy, there first
		}
	}
	return nil
}

func writeFrom(p string, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// CachedLayer is a gzip layer of the tree build writes into the directory
// it is given, kept in CacheDir under key (which must change whenever
// what build writes does: put a version or a fingerprint in it), so that
// build runs once per machine, not per test.
func CachedLayer(t testing.TB, key string, build func(dir string)) v1.Layer {
	t.Helper()
	dir, err := CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "layer-"+key+".tar.gz")
	if _, err := os.Stat(p); err != nil {
		tree := t.TempDir()
		build(tree)
		if err := writeLayer(p, tree); err != nil {
			t.Fatalf("layer %s: %v", key, err)
		}
	}
	l, err := tarball.LayerFromFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// writeLayer writes the tree as a gzip tar at p, atomically.
func writeLayer(p, tree string) error {
	tmp := p + fmt.Sprintf(".%d.part", os.Getpid())
	defer os.Remove(tmp)
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer f.Close()
	zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
	if err := writeTar(zw, tree); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// Fingerprint names the state of host paths (each file's or tree's
// paths, sizes and times), for CachedLayer keys.
func Fingerprint(t testing.TB, paths ...string) string {
	t.Helper()
	h := sha256.New()
	for _, root := range paths {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%s %d %d %v\n", p, fi.Size(), fi.ModTime().UnixNano(), fi.Mode())
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil))[:16]
}

// Extend stacks layers on base, with base's configuration but env as the
// image's environment and this host's platform.
func Extend(t testing.TB, base v1.Image, env []string, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(base, layers...)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.Config.Env = env
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatal(err)
	}
	return img
}
