package image

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/runner/image/imagetest"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

// A tree the store unpacks gets every mount point of the jail's that the
// image lacks (sandbox.MountPoints), listed in image.json; a jail on it
// binds it at "/" whole: no entry of the image bound on its own, no
// directory split into a tmpfs of its own.
func TestMountPoints(t *testing.T) {
	dir := t.TempDir()
	imagetest.Rootfs(t, dir, "sh", "cat")
	imagetest.WriteFile(t, dir, "etc/resolv.conf", "IMAGE\n", 0o644)
	reg := newRegistry(t)
	ref := reg.push(t, "fresh:1", imagetest.Image(t, dir, []string{"PATH=/usr/bin:/bin"}))
	root := t.TempDir()
	got, err := pull(t, openStore(t, root, Options{}), ref)
	if err != nil {
		t.Fatal(err)
	}
	for _, mp := range sandbox.MountPoints() {
		fi, err := os.Lstat(filepath.Join(got.Root, mp.Path))
		switch {
		case err != nil:
			t.Errorf("no mount point %s: %v", mp.Path, err)
		case mp.Link != "":
			if target, _ := os.Readlink(filepath.Join(got.Root, mp.Path)); target != mp.Link {
				t.Errorf("%s links to %q, want %q", mp.Path, target, mp.Link)
			}
		case mp.Dir != fi.IsDir() || !mp.Dir && !fi.Mode().IsRegular():
			t.Errorf("%s is %v, want a directory: %v", mp.Path, fi.Mode(), mp.Dir)
		}
	}
	if slices.Contains(got.MountPoints, "/etc/resolv.conf") || !slices.Contains(got.MountPoints, sandbox.WorkspacePath) {
		t.Errorf("MountPoints %q: want /workspace, which the image lacked, and not its own resolv.conf", got.MountPoints)
	}
	if b, _ := os.ReadFile(filepath.Join(got.Root, "etc/resolv.conf")); string(b) != "IMAGE\n" {
		t.Errorf("the image's resolv.conf holds %q", b)
	}
	again, err := pull(t, openStore(t, root, Options{}), ref)
	if err != nil || !slices.Equal(again.MountPoints, got.MountPoints) {
		t.Errorf("image.json read back: MountPoints %q (%v), want %q", again.MountPoints, err, got.MountPoints)
	}

	s, err := sandbox.New(sandbox.Config{PATH: sandbox.HostEnv()["PATH"], Network: sandbox.NetworkNone, StateDir: t.TempDir()})
	if err == nil {
		err = s.SelfTest(context.Background())
	}
	if err != nil {
		t.Skipf("sandbox unavailable: %v", err)
	}
	t.Cleanup(s.Close)
	img := s.WithImage(sandbox.Image{Root: got.Root, Name: ref, Env: got.Env})
	run := t.TempDir()
	ws := filepath.Join(run, "worktree")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res, err := sandbox.Run(context.Background(), sandbox.Cmd{Argv: []string{"cat", "/proc/self/mountinfo"}, Dir: ws,
		Env: sandbox.NodeEnv(sandbox.EnvSpec{Image: img.ImageEnv()}), Stdout: &out, Stderr: &out,
		Jail: sandbox.NodeJail(img, sandbox.HostEnv(), ws, filepath.Join(run, "stage"), filepath.Join(run, "managed"), filepath.Join(run, "cache"))})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("jail: %v, exit %d:\n%s", err, res.ExitCode, out.String())
	}
	whole := false
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		f := strings.Fields(l)
		if len(f) < 5 {
			t.Fatalf("mountinfo line %q", l)
		}
		switch from, at := f[3], f[4]; {
		case at == "/" && strings.HasSuffix(from, "/"+rootfsDir):
			whole = true
		case strings.Contains(from, "/"+rootfsDir+"/"):
			t.Errorf("the image's %s is bound on its own at %s: a split", strings.SplitN(from, "/"+rootfsDir, 2)[1], at)
		case strings.Contains(l, " tmpfs ") && strings.Contains(l, "size=1024k"):
			t.Errorf("a split directory's tmpfs at %s", at)
		}
	}
	if !whole {
		t.Errorf("the image is not bound at / whole:\n%s", out.String())
	}
}

// A link of the image on the way to a mount point gets nothing made
// through it, and what the image has stays as it is.
func TestMountPointsNotThroughLinks(t *testing.T) {
	reg := newRegistry(t)
	ref := reg.push(t, "links:1", imageOf(t, testPlatform,
		layer(t, dir("etc"), file("etc/resolv.conf", "IMAGE"), symlink("home", "/etc"), symlink("kilroy", "etc"), dir("dev"),
			symlink("dev/fd", "/elsewhere"))))
	got, err := pull(t, openStore(t, t.TempDir(), Options{}), ref)
	if err != nil {
		t.Fatal(err)
	}
	if tree := listTree(t, got.Root); tree != "dev/\ndev/fd -> /elsewhere\netc/\netc/resolv.conf = IMAGE\nhome -> /etc\nkilroy -> etc" {
		t.Errorf("the image's own entries changed:\n%s", tree)
	}
	for _, p := range got.MountPoints {
		if within := func(d string) bool { return p == d || strings.HasPrefix(p, d+"/") }; within("/home") || within("/kilroy") ||
			p == "/dev/fd" || p == "/etc/resolv.conf" {
			t.Errorf("added %s, through or over the image's own", p)
		}
	}
	if names, _ := os.ReadDir(filepath.Join(got.Root, "etc")); len(names) != 3 { // resolv.conf, passwd, group
		t.Errorf("etc holds %v", names)
	}
}
