package image

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Images built locally (podman, docker, buildah) reach kilroy-bot run as
// an OCI layout, a tar of one, or a docker save archive.
func TestLocalSources(t *testing.T) {
	img := imageOf(t, testPlatform, layer(t, file("etc/os-release", "ID=local\n")), layer(t, file("usr/bin/tool", "1")))
	manifestDigest, _ := img.Digest()
	configDigest, _ := img.ConfigName()
	dir := t.TempDir()

	ociDir := filepath.Join(dir, "layout")
	p, err := layout.Write(ociDir, emptyIndex())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendImage(img); err != nil {
		t.Fatal(err)
	}
	ociArchive := filepath.Join(dir, "image.oci.tar")
	tarDir(t, ociDir, ociArchive)
	multiDir := filepath.Join(dir, "multi")
	if _, err := layout.Write(multiDir, indexOf(t, imageOf(t, "linux/arm64", layer(t, file("arch", "arm64"))), img)); err != nil {
		t.Fatal(err)
	}
	dockerArchive := filepath.Join(dir, "image.docker.tar")
	if err := tarball.WriteToFile(dockerArchive, name.MustParseReference("local/tool:dev"), img); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)

	for _, tc := range []struct {
		ref, name string
		digest    v1.Hash
	}{
		{"oci:" + ociDir, "oci:" + ociDir, manifestDigest},
		{"oci:layout", "oci:" + ociDir, manifestDigest}, // made absolute
		{"oci:" + multiDir, "oci:" + multiDir, manifestDigest},
		{"oci-archive:" + ociArchive, "oci-archive:" + ociArchive, manifestDigest},
		{"docker-archive:image.docker.tar", "docker-archive:" + dockerArchive, configDigest},
	} {
		t.Run(tc.ref, func(t *testing.T) {
			s := openStore(t, t.TempDir(), Options{})
			r, err := s.Resolve(context.Background(), tc.ref)
			if err != nil {
				t.Fatal(err)
			}
			if want := (Ref{Name: tc.name, Digest: tc.digest.String()}); r != want {
				t.Errorf("Resolve = %+v, want %+v", r, want)
			}
			got, err := s.Ensure(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			defer got.Release()
			if tree := listTree(t, got.Root); tree != "etc/\netc/os-release = ID=local\n\nusr/\nusr/bin/\nusr/bin/tool = 1" {
				t.Errorf("tree:\n%s", tree)
			}
			if got.WorkingDir != "/src" || len(got.Env) != 2 {
				t.Errorf("config: %+v", got.Config)
			}
			assertEmpty(t, s.path(tmpDir))
		})
	}
}

// A source that changed since Resolve is refused by digest, not used.
func TestLocalSourceChanged(t *testing.T) {
	dir := t.TempDir()
	archive := filepath.Join(dir, "image.tar")
	write := func(body string) {
		img := imageOf(t, testPlatform, layer(t, file("a", body)))
		if err := tarball.WriteToFile(archive, name.MustParseReference("local/x:1"), img); err != nil {
			t.Fatal(err)
		}
	}
	write("1")
	s := openStore(t, t.TempDir(), Options{})
	r, err := s.Resolve(context.Background(), "docker-archive:"+archive)
	if err != nil {
		t.Fatal(err)
	}
	write("2")
	if _, err := s.Ensure(context.Background(), r); !errors.Is(err, ErrDigest) {
		t.Errorf("Ensure of a rewritten archive = %v, want ErrDigest", err)
	}
}

// An oci-archive is unpacked with a layer's rules: one that climbs out is
// refused and writes nothing outside.
func TestHostileOCIArchive(t *testing.T) {
	outside := t.TempDir()
	archive := filepath.Join(t.TempDir(), "evil.tar")
	f, err := os.Create(archive)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(tarBytes(t, file("oci-layout", `{"imageLayoutVersion":"1.0.0"}`),
		file(strings.Repeat("../", 40)+strings.TrimPrefix(outside, "/")+"/evil", "x")))
	f.Close()
	s := openStore(t, t.TempDir(), Options{})
	_, err = s.Resolve(context.Background(), "oci-archive:"+archive)
	if !errors.Is(err, ErrUnsafe) {
		t.Errorf("err = %v, want ErrUnsafe", err)
	}
	assertEmpty(t, outside)
	assertEmpty(t, s.path(tmpDir))
}

// A real image: the Debian base that scripts/install-podman.sh builds,
// saved by podman as an OCI archive.
func TestPodmanOCIArchive(t *testing.T) {
	if _, err := exec.LookPath("podman"); err != nil {
		t.Skip("podman is not installed (scripts/install-podman.sh installs it and builds the base image)")
	}
	const base = "localhost/kilroy-ci/debian:bookworm-slim"
	if err := exec.Command("podman", "image", "exists", base).Run(); err != nil {
		t.Skipf("podman has no %s: run scripts/install-podman.sh", base)
	}
	archive := filepath.Join(t.TempDir(), "debian.oci.tar")
	if out, err := exec.Command("podman", "save", "--format", "oci-archive", "-o", archive, base).CombinedOutput(); err != nil {
		t.Fatalf("podman save: %v\n%s", err, out)
	}
	s := openStore(t, t.TempDir(), Options{Platform: ""})
	got, err := pull(t, s, "oci-archive:"+archive)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"etc/debian_version", "usr/bin/env", "bin"} {
		if _, err := os.Lstat(filepath.Join(got.Root, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	t.Logf("%s: %d bytes, %d entries dropped, %d setuid/setgid bits cleared", got.Ref, got.Bytes, got.Dropped, got.Cleared)
}

// tarDir writes the directory as a tar file, as podman save writes an
// oci-archive.
func tarDir(t testing.TB, dir, out string) {
	t.Helper()
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		h, err := tar.FileInfoHeader(fi, "")
		if err != nil {
			return err
		}
		h.Name = rel
		if err := tw.WriteHeader(h); err != nil || d.IsDir() {
			return err
		}
		src, err := os.Open(p)
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = io.Copy(tw, src)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
}
