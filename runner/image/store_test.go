package image

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"golang.org/x/sys/unix"
)

// A pulled image is its layers applied in order, with its config beside
// it, and pinned to the manifest's digest.
func TestEnsureUnpacksLayersInOrder(t *testing.T) {
	reg := newRegistry(t)
	img := imageOf(t, testPlatform,
		layer(t, dir("etc"), file("etc/os-release", "ID=test\n"), file("usr/bin/tool", "v1"), symlink("bin", "usr/bin")),
		layer(t, file("usr/bin/tool", "v2"), hardlink("usr/bin/tool2", "usr/bin/tool"), symlink("etc/abs", "/usr/bin/tool")),
	)
	ref := reg.push(t, "tools:1", img)
	s := openStore(t, t.TempDir(), Options{})

	got, err := pull(t, s, ref)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"bin -> usr/bin",
		"etc/",
		"etc/abs -> /usr/bin/tool",
		"etc/os-release = ID=test\n",
		"usr/",
		"usr/bin/",
		"usr/bin/tool = v2",
		"usr/bin/tool2 = v2",
	}, "\n")
	if diff := cmp.Diff(listTree(t, got.Root), want); diff != "" {
		t.Errorf("tree (-got +want):\n%s", diff)
	}
	a, _ := os.Stat(filepath.Join(got.Root, "usr/bin/tool"))
	b, _ := os.Stat(filepath.Join(got.Root, "usr/bin/tool2"))
	if !os.SameFile(a, b) {
		t.Errorf("usr/bin/tool2 is not a hard link of usr/bin/tool")
	}
	digest, _ := img.Digest()
	wantCfg := Config{
		Ref:        Ref{Name: ref, Digest: digest.String()},
		Platform:   testPlatform,
		Env:        []string{"PATH=/usr/local/go/bin:/usr/bin:/bin", "GOTOOLCHAIN=local"},
		WorkingDir: "/src", User: "1000:1000",
	}
	gotCfg := got.Config
	gotCfg.Bytes, gotCfg.Pulled = 0, wantCfg.Pulled
	gotCfg.MountPoints = nil // TestMountPoints checks them
	if diff := cmp.Diff(gotCfg, wantCfg); diff != "" {
		t.Errorf("config (-got +want):\n%s", diff)
	}
	if got.Bytes <= 0 {
		t.Errorf("Bytes = %d, want the layers' size", got.Bytes)
	}
	if want := filepath.Join(s.root, digest.Hex, "rootfs"); got.Root != want {
		t.Errorf("Root = %s, want %s", got.Root, want)
	}
	assertEmpty(t, s.path(tmpDir))
}

// Resolve costs one manifest request; a cached digest costs none, even
// from another Store on the same directory (another replica).
func TestCachedDigestMakesNoRequest(t *testing.T) {
	reg := newRegistry(t)
	img := imageOf(t, testPlatform, layer(t, file("a", "1")), layer(t, file("b", "2")))
	ref := reg.push(t, "cached:1", img)
	root := t.TempDir()
	ctx := context.Background()

	reg.reset()
	s := openStore(t, root, Options{})
	r, err := s.Resolve(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if n := reg.count("GET", "/blobs/"); n != 0 {
		t.Errorf("Resolve fetched %d blobs:\n%s", n, reg.log())
	}
	if n := reg.count("GET", "/manifests/") + reg.count("HEAD", "/manifests/"); n != 1 {
		t.Errorf("Resolve made %d manifest requests, want 1:\n%s", n, reg.log())
	}

	reg.reset()
	first, err := s.Ensure(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	first.Release()
	if n := reg.count("GET", "/blobs/"); n != 3 {
		t.Errorf("first Ensure fetched %d blobs, want 3 (config and 2 layers):\n%s", n, reg.log())
	}

	reg.reset()
	other := openStore(t, root, Options{})
	second, err := other.Ensure(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	second.Release()
	if log := reg.log(); log != "" {
		t.Errorf("Ensure of a cached digest made requests:\n%s", log)
	}
	if second.Root != first.Root {
		t.Errorf("second Root %s, first %s", second.Root, first.Root)
	}
}

// Eight goroutines of two Stores sharing a directory (two replicas) ask
// for the same digest at once: one pull, one unpack.
func TestConcurrentEnsurePullsOnce(t *testing.T) {
	reg := newRegistry(t)
	img := imageOf(t, testPlatform, layer(t, file("a", "1")), layer(t, file("b", "2")), layer(t, file("c", "3")))
	ref := reg.push(t, "busy:1", img)
	root := t.TempDir()
	stores := []*Store{openStore(t, root, Options{}), openStore(t, root, Options{})}
	r, err := stores[0].Resolve(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	layers, _ := img.Layers()
	hold := make(chan struct{})
	reg.mu.Lock()
	reg.hold[mustDigest(t, layers[0]).String()] = hold // every goroutine is waiting before the first pull ends
	reg.mu.Unlock()
	reg.reset()

	var wg sync.WaitGroup
	roots := make([]string, 8)
	errs := make([]error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			img, err := stores[i%2].Ensure(context.Background(), r)
			if err == nil {
				roots[i] = img.Root
				img.Release()
			}
			errs[i] = err
		}()
	}
	waitFor(t, func() bool { return reg.count("GET", "/blobs/") >= 2 }) // the config, then the first layer
	close(hold)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("goroutine %d: %v", i, err)
		}
		if roots[i] != roots[0] {
			t.Errorf("goroutine %d got %s, goroutine 0 %s", i, roots[i], roots[0])
		}
	}
	if n := reg.count("GET", "/blobs/"); n != 4 {
		t.Errorf("%d blob fetches, want 4 (one pull: config and 3 layers):\n%s", n, reg.log())
	}
	if n := reg.count("GET", "/manifests/"); n != 1 {
		t.Errorf("%d manifest fetches, want 1 (one pull):\n%s", n, reg.log())
	}
	if got := images(t, root); len(got) != 1 {
		t.Errorf("images %v, want one", got)
	}
	assertEmpty(t, stores[0].path(tmpDir))
}

// A pull cut off midway leaves no image and nothing in the temporary
// directory; the next Ensure pulls it whole.
func TestCancelledPullLeavesNothing(t *testing.T) {
	reg := newRegistry(t)
	img := imageOf(t, testPlatform, layer(t, file("a", "1")), layer(t, file("b", "2")))
	ref := reg.push(t, "cut:1", img)
	s := openStore(t, t.TempDir(), Options{})
	r, err := s.Resolve(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	layers, _ := img.Layers()
	second := mustDigest(t, layers[1])
	hold := make(chan struct{})
	reg.mu.Lock()
	reg.hold[second.String()] = hold
	reg.mu.Unlock()

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := s.Ensure(ctx, r)
		done <- err
	}()
	waitFor(t, func() bool { return reg.count("GET", second.String()) == 1 }) // layer 1 is unpacked
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Ensure = %v, want context.Canceled", err)
	}
	close(hold)
	if got := images(t, s.root); len(got) != 0 {
		t.Errorf("images %v after a cancelled pull, want none", got)
	}
	assertEmpty(t, s.path(tmpDir))

	got, err := s.Ensure(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	if diff := cmp.Diff(listTree(t, got.Root), "a = 1\nb = 2"); diff != "" {
		t.Errorf("tree (-got +want):\n%s", diff)
	}
}

// Sweep removes what no one uses, keeps what a run holds, and clears what
// dead pulls left.
func TestSweep(t *testing.T) {
	reg := newRegistry(t)
	refA := reg.push(t, "a:1", imageOf(t, testPlatform, layer(t, file("a", "1"))))
	refB := reg.push(t, "b:1", imageOf(t, testPlatform, layer(t, file("b", "1"))))
	root := t.TempDir()
	s := openStore(t, root, Options{})
	ctx := context.Background()
	a, err := pull(t, s, refA)
	if err != nil {
		t.Fatal(err)
	}
	b, err := pull(t, s, refB)
	if err != nil {
		t.Fatal(err)
	}
	a.Release()
	stale := filepath.Join(root, tmpDir, strings.Repeat("0", 64)+".dead")
	if err := os.MkdirAll(filepath.Join(stale, "rootfs/usr"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(stale, a.Pulled.AddDate(0, 0, -1), a.Pulled.AddDate(0, 0, -1))
	busy, lock, err := s.tempDir("busy.")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	os.Chtimes(busy, a.Pulled.AddDate(0, 0, -1), a.Pulled.AddDate(0, 0, -1))

	// Nothing is old enough yet.
	if removed, err := s.Sweep(ctx, 1<<40); err != nil || len(removed) != 0 {
		t.Fatalf("Sweep(long) = %v, %v; want nothing removed", removed, err)
	}
	removed, err := s.Sweep(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(removed, []string{a.Ref.Digest}); diff != "" {
		t.Errorf("removed (-got +want):\n%s", diff)
	}
	if _, err := os.Stat(b.Root); err != nil {
		t.Errorf("the leased image is gone: %v", err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a dead pull's directory is still there: %v", err)
	}
	if _, err := os.Stat(busy); err != nil {
		t.Errorf("a live temporary directory is gone: %v", err)
	}
	b.Release()
	if removed, err := s.Sweep(ctx, 0); err != nil || len(removed) != 1 {
		t.Errorf("Sweep after Release = %v, %v; want the second image removed", removed, err)
	}
	// A swept image comes back on demand.
	again, err := pull(t, s, refA)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(listTree(t, again.Root), "a = 1"); diff != "" {
		t.Errorf("tree (-got +want):\n%s", diff)
	}
}

// Whiteouts hide the lower layers' files; an opaque directory hides all
// they put there, before or after this layer's own entries.
func TestWhiteouts(t *testing.T) {
	reg := newRegistry(t)
	img := imageOf(t, testPlatform,
		layer(t, file("a/x", "1"), file("a/y", "1"), file("b/z", "1"), file("b/sub/deep", "1"),
			file("c/keep", "1"), file("d/old", "1"), file("d/sub/old", "1"), dir("e"), file("e/f", "1"), file("g", "file")),
		layer(t, file("a/.wh.x", ""), file("b/.wh..wh..opq", ""), file("b/new", "2"),
			file("d/new", "2"), file("d/sub/new", "2"), file("d/.wh..wh..opq", ""),
			file(".wh.e", ""), file("nothere/.wh.x", ""), dir("g"), file("g/in", "2")),
		layer(t, file("a/.wh.x", ""), file("e/again", "3")),
	)
	ref := reg.push(t, "wh:1", img)
	got, err := pull(t, openStore(t, t.TempDir(), Options{}), ref)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"a/", "a/y = 1",
		"b/", "b/new = 2",
		"c/", "c/keep = 1",
		"d/", "d/new = 2", "d/sub/", "d/sub/new = 2",
		"e/", "e/again = 3",
		"g/", "g/in = 2",
	}, "\n")
	if diff := cmp.Diff(listTree(t, got.Root), want); diff != "" {
		t.Errorf("tree (-got +want):\n%s", diff)
	}
}

// Modes survive, except setuid and setgid; a directory without write
// permission still receives the later layers' files.
func TestModes(t *testing.T) {
	reg := newRegistry(t)
	img := imageOf(t, testPlatform,
		layer(t, ent{name: "ro", typ: '5', mode: 0o555}, file("ro/a", "1"),
			ent{name: "bin/su", body: "#!/bin/sh\n", mode: 0o4755},
			ent{name: "bin/wall", body: "x", mode: 0o2755},
			ent{name: "tmp", typ: '5', mode: 0o1777},
			ent{name: "var/mail", typ: '5', mode: 0o2775}),
		layer(t, file("ro/b", "2")),
	)
	ref := reg.push(t, "modes:1", img)
	got, err := pull(t, openStore(t, t.TempDir(), Options{}), ref)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{
		"ro":       os.ModeDir | 0o555,
		"ro/b":     0o644,
		"bin/su":   0o755,
		"bin/wall": 0o755,
		"tmp":      os.ModeDir | os.ModeSticky | 0o777,
		"var/mail": os.ModeDir | 0o775,
	} {
		fi, err := os.Lstat(filepath.Join(got.Root, p))
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode(), want)
		}
	}
	if got.Cleared != 3 {
		t.Errorf("Cleared = %d, want 3", got.Cleared)
	}
}

// An index gives the image of the store's platform; an image of another
// platform only is refused, by Resolve for an index and by Ensure (before
// any layer) for a lone manifest.
func TestPlatforms(t *testing.T) {
	reg := newRegistry(t)
	amd := imageOf(t, "linux/amd64", layer(t, file("arch", "amd64")))
	arm := imageOf(t, "linux/arm64/v8", layer(t, file("arch", "arm64")))
	s390 := imageOf(t, "linux/s390x", layer(t, file("arch", "s390x")))
	multi := reg.pushIndex(t, "multi:1", indexOf(t, arm, amd))
	onlyOther := reg.pushIndex(t, "other:1", indexOf(t, s390))
	lone := reg.push(t, "lone:1", s390)
	ctx := context.Background()

	for _, tc := range []struct{ platform, want string }{{"linux/amd64", "amd64"}, {"linux/arm64", "arm64"}} {
		s := openStore(t, t.TempDir(), Options{Platform: tc.platform})
		got, err := pull(t, s, multi)
		if err != nil {
			t.Fatalf("%s: %v", tc.platform, err)
		}
		if tree := listTree(t, got.Root); tree != "arch = "+tc.want {
			t.Errorf("%s: tree %q", tc.platform, tree)
		}
	}

	s := openStore(t, t.TempDir(), Options{Platform: "linux/amd64"})
	_, err := s.Resolve(ctx, onlyOther)
	if !errors.Is(err, ErrPlatform) || !strings.Contains(err.Error(), "linux/s390x") {
		t.Errorf("Resolve of an index for s390x only = %v, want ErrPlatform naming linux/s390x", err)
	}

	r, err := s.Resolve(ctx, lone)
	if err != nil {
		t.Fatal(err)
	}
	reg.reset()
	_, err = s.Ensure(ctx, r)
	if !errors.Is(err, ErrPlatform) {
		t.Errorf("Ensure of an s390x image = %v, want ErrPlatform", err)
	}
	layers, _ := s390.Layers()
	if n := reg.count("GET", mustDigest(t, layers[0]).String()); n != 0 {
		t.Errorf("the layer was fetched %d times for an image of another platform", n)
	}
	if got := images(t, s.root); len(got) != 0 {
		t.Errorf("images %v, want none", got)
	}
}

func indexOf(t testing.TB, imgs ...v1.Image) v1.ImageIndex {
	t.Helper()
	var adds []mutate.IndexAddendum
	for _, img := range imgs {
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		p := cf.Platform()
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: p}})
	}
	return mutate.AppendManifests(emptyIndex(), adds...)
}

func mustDigest(t testing.TB, l interface{ Digest() (v1.Hash, error) }) v1.Hash {
	t.Helper()
	h, err := l.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// A directory in the image's place that is not a complete image (no
// image.json) is replaced, not trusted.
func TestBrokenImageDirectoryReplaced(t *testing.T) {
	reg := newRegistry(t)
	img := imageOf(t, testPlatform, layer(t, file("a", "1")))
	ref := reg.push(t, "broken:1", img)
	s := openStore(t, t.TempDir(), Options{})
	digest, _ := img.Digest()
	if err := os.MkdirAll(filepath.Join(s.root, digest.Hex, "rootfs/junk"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := pull(t, s, ref)
	if err != nil {
		t.Fatal(err)
	}
	if tree := listTree(t, got.Root); tree != "a = 1" {
		t.Errorf("tree %q", tree)
	}
	assertEmpty(t, s.path(tmpDir))
}

// The directory pulls unpack in is marked for ext4 as the top of
// unrelated trees (see spreadSubdirs). Other filesystems (tmpfs, XFS,
// btrfs) refuse the flag, and the store goes on without it.
func TestPullsUnpackInATopDirectory(t *testing.T) {
	s := openStore(t, t.TempDir(), Options{})
	var fs unix.Statfs_t
	if err := unix.Statfs(s.path(tmpDir), &fs); err != nil {
		t.Fatal(err)
	}
	if fs.Type != unix.EXT4_SUPER_MAGIC {
		t.Skipf("the test directory is not on ext2/3/4 (filesystem magic %#x): only ext4 has FS_TOPDIR_FL", fs.Type)
	}
	fd, err := unix.Open(s.path(tmpDir), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
	if err != nil {
		t.Fatal(err)
	}
	if flags&topdirFlag == 0 {
		t.Errorf("%s: flags %#x, want FS_TOPDIR_FL (%#x)", s.path(tmpDir), flags, topdirFlag)
	}
}
