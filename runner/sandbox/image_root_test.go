package sandbox

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/runner/image/imagetest"
)

// imageSandbox returns a Sandbox whose jails run on a tree made of the
// host's sh, cat and ls with their libraries, a marker file and the image
// Env the tests look for; edit, when set, changes the tree first.
func imageSandbox(t *testing.T, edit func(root string)) (*Sandbox, string) {
	t.Helper()
	s := newTestSandbox(t, Config{})
	root := t.TempDir()
	imagetest.Rootfs(t, root, "sh", "cat", "ls", "touch", "readlink")
	imagetest.WriteFile(t, root, "opt/toolchain/marker", "FROM-THE-IMAGE\n", 0o644)
	imagetest.WriteFile(t, root, "var/lib/dpkg/status", "DPKG\n", 0o644)
	for _, d := range []string{"proc", "dev", "etc/ssl", "var/tmp", "home/someone"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if edit != nil {
		edit(root)
	}
	return s.WithImage(Image{Root: root, Name: "test-image", Env: []string{"IMAGE_VAR=from-image", "PATH=/usr/bin:/bin"}}), root
}

func imageRun(t *testing.T, s *Sandbox, j *Jail, script string) (Result, string) {
	t.Helper()
	env := NodeEnv(EnvSpec{Image: s.ImageEnv(), Host: HostEnv(), Stage: map[string]string{"KILROY_STAGE": "x"}})
	return runOut(t, Cmd{Argv: []string{"sh", "-c", script}, Dir: j.Workspace, Env: env, Jail: j})
}

// A jail on an image shows the image's tree, read-only, and not the
// host's system directories: the marker the image has, none of the
// host's programs or /etc, the image's Env under the stage variables, the
// jail's own passwd, and the workspace, stage directory, /tmp, HOME and
// /var/tmp (a directory of the image's: a private one) writable on top of
// it.
func TestImageJailShowsTheImageNotTheHost(t *testing.T) {
	s, root := imageSandbox(t, nil)
	before := treeListing(t, root)
	run := t.TempDir()
	ws, stage := filepath.Join(run, "worktree"), filepath.Join(run, "nodes", "unit")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	j := NodeJail(s, HostEnv(), ws, stage, filepath.Join(run, "policy-managed-roots"), "")
	res, out := imageRun(t, s, j, `
		cat /opt/toolchain/marker /var/lib/dpkg/status
		[ -L /var/tmp ] && echo "LINK /var/tmp"; echo v > /var/tmp/v
		echo "var/tmp=$(cat /var/tmp/v) home=$(echo $(ls /home))"
		for p in /usr/bin/bwrap /etc/os-release /etc/hostname; do [ -e $p ] && echo "HOST $p"; done
		echo "var=$IMAGE_VAR stage=$KILROY_STAGE home=$HOME path=$PATH"
		cat /etc/passwd | while read l; do case $l in kilroy:*) echo passwd-kilroy;; esac; done
		touch /opt/toolchain/new 2>/dev/null && echo "WROTE image"
		for d in / /home /var /var/lib /dev /opt; do touch $d/new 2>/dev/null && echo "WROTE $d"; done
		echo w > `+ws+`/w && echo s > `+stage+`/status.json && echo t > /tmp/t && echo h > $HOME/h && echo writes-ok`)
	if res.ExitCode != 0 {
		t.Fatalf("exit %d:\n%s", res.ExitCode, out)
	}
	want := "FROM-THE-IMAGE\nDPKG\nvar/tmp=v home=kilroy someone\nvar=from-image stage=x home=" + HomePath + " path=/usr/bin:/bin\npasswd-kilroy\nwrites-ok\n"
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	if after := treeListing(t, root); after != before {
		t.Errorf("the image tree changed:\nbefore %s\nafter  %s", before, after)
	}
	for _, f := range []string{filepath.Join(ws, "w"), filepath.Join(stage, "status.json")} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("not written through the jail: %v", err)
		}
	}
}

// A link of the image where the jail mounts something (/tmp, HOME's
// parent, /proc, /kilroy, /dev) does not take the mount anywhere else:
// bubblewrap makes its mount points through the image's paths, and a link
// there, followed, would lead to the image's /etc, or to the host's root
// as bubblewrap sees it while it builds the jail (/oldroot), where it
// would make directories of the host. The jail gets plain directories
// there instead, on a tree as unpacked before the store added mount
// points and on one it added them to (AddMountPoints), which adds nothing
// through a link.
func TestImageJailLinksAtMountPointsLeadNowhere(t *testing.T) {
	for _, prepared := range []bool{false, true} {
		t.Run(fmt.Sprintf("prepared=%v", prepared), func(t *testing.T) {
			host := t.TempDir()
			s, root := imageSandbox(t, func(root string) {
				for link, target := range map[string]string{
					"tmp": "/etc", "home": "/oldroot" + host, "proc": "/oldroot/proc", "var": "/oldroot" + host,
					"kilroy": "/oldroot" + host, "dev": "/oldroot" + host,
				} {
					os.RemoveAll(filepath.Join(root, link))
					if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
						t.Fatal(err)
					}
				}
				if prepared {
					if _, err := AddMountPoints(root); err != nil {
						t.Fatal(err)
					}
				}
			})
			j := NodeJail(s, HostEnv(), t.TempDir(), t.TempDir(), t.TempDir(), "")
			res, out := imageRun(t, s, j, `
				[ "$(readlink /var/tmp)" = /tmp ] || echo "/var/tmp is no link to /tmp"
				for d in /tmp /home /var $HOME /kilroy /dev; do [ -d $d ] && [ ! -L $d ] || echo "LINK $d"; done
				echo t > /tmp/t && echo h > $HOME/h && echo v > /var/tmp/v && echo s > /kilroy/stage/s &&
				echo n > /dev/null && ls /etc && ls /proc/self/ >/dev/null && echo ok`)
			want := "group\npasswd\nssl\nok\n"
			if prepared {
				want = "group\npasswd\nresolv.conf\nssl\nok\n"
			}
			if res.ExitCode != 0 || out != want {
				t.Errorf("exit %d, output:\n%s\nwant:\n%s", res.ExitCode, out, want)
			}
			if names, _ := os.ReadDir(host); len(names) != 0 {
				t.Errorf("the jail made %v in a host directory an image link named", names)
			}
			if _, err := os.Lstat(filepath.Join(root, "etc", "t")); err == nil {
				t.Errorf("a write to /tmp went to the image's /etc")
			}
		})
	}
}

// A program the image does not have is not found, whatever the host
// has, and the error names the image and what to change.
func TestImageJailProgramNotInImage(t *testing.T) {
	s, _ := imageSandbox(t, nil)
	j := NodeJail(s, HostEnv(), t.TempDir(), "", "", "")
	env := NodeEnv(EnvSpec{Image: s.ImageEnv()})
	_, err := Run(context.Background(), Cmd{Argv: []string{"bwrap", "--version"}, Dir: j.Workspace, Env: env, Jail: j})
	var nf *NotFoundError
	if !errors.As(err, &nf) || nf.Image != "test-image" {
		t.Fatalf("Run(bwrap) in an image without it: %v, want a NotFoundError naming the image", err)
	}
	for _, want := range []string{"`bwrap` not found in image test-image", "image:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// treeListing lists every path under root with its mode and size.
func treeListing(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			b.WriteString(p + " " + fi.Mode().String() + "\n")
		}
		return nil
	})
	return b.String()
}

// A program of the host that an image lacks, named by its absolute path
// (an agent CLI the bot installed), runs in the image jail when it can
// there: a static binary, a script whose interpreter the image has. A
// dynamically linked one, or a script whose interpreter the image lacks,
// is refused before it starts, saying why and what to change.
func TestImageJailHostProgram(t *testing.T) {
	s, _ := imageSandbox(t, nil)
	gofmt, err := exec.LookPath("gofmt")
	if err != nil {
		t.Skip("no gofmt on this host")
	}
	if f, err := elf.Open(gofmt); err != nil || slices.ContainsFunc(f.Progs, func(p *elf.Prog) bool { return p.Type == elf.PT_INTERP }) {
		t.Skipf("%s is not a static binary here", gofmt)
	}
	dir := t.TempDir()
	shScript := writeScript(t, dir, "agent-sh", "echo from-a-host-script\n")
	pyScript := filepath.Join(dir, "agent-py")
	if err := os.WriteFile(pyScript, []byte("#!/usr/bin/env python3\nprint('x')\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	j := NodeJail(s, HostEnv(), t.TempDir(), "", "", "")
	env := NodeEnv(EnvSpec{Image: s.ImageEnv()})
	for _, tc := range []struct {
		argv      []string
		stdin     string
		want      string // output, or the error's reason
		wantError bool
	}{
		{argv: []string{gofmt}, stdin: "package x\nvar  y=1\n", want: "package x\n\nvar y = 1\n"},
		{argv: []string{shScript}, want: "from-a-host-script\n"},
		{argv: []string{"/usr/bin/git", "--version"}, want: "dynamically linked", wantError: true},
		{argv: []string{pyScript}, want: "interpreter `python3` is not in the image", wantError: true},
	} {
		var out combined
		stdout, stderr := out.writers()
		res, err := Run(context.Background(), Cmd{Argv: tc.argv, Dir: j.Workspace, Env: env, Jail: j,
			Stdin: strings.NewReader(tc.stdin), Stdout: stdout, Stderr: stderr})
		var nf *NotFoundError
		switch {
		case tc.wantError && (!errors.As(err, &nf) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "image:")):
			t.Errorf("%s: error %v, want a NotFoundError saying %q and what to change", tc.argv[0], err, tc.want)
		case !tc.wantError && (err != nil || res.ExitCode != 0 || out.String() != tc.want):
			t.Errorf("%s: %v, exit %d, output %q, want %q", tc.argv[0], err, res.ExitCode, out.String(), tc.want)
		}
	}
}

// A jail on an image gets the run's caches as a host jail does: every
// cache variable points into the repository's cache directory over the
// image's Env, the directory is bound writable at the same path, and the
// host's PATH and toolchain directories are not bound (the image's are
// there), while the operator's read-only paths still are.
func TestImageJailCaches(t *testing.T) {
	s, _ := imageSandbox(t, nil)
	ro := t.TempDir()
	s.readOnly = append(s.readOnly, ro)
	tools, java := t.TempDir(), t.TempDir()
	host := map[string]string{"PATH": tools + ":/usr/bin:/bin", "JAVA_HOME": java, "HOME": t.TempDir(),
		"GOMODCACHE": t.TempDir()}
	run := t.TempDir()
	ws, stage, caches := filepath.Join(run, "worktree"), filepath.Join(run, "nodes", "a"), filepath.Join(t.TempDir(), "cache")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := MakeCacheDirs(caches); err != nil {
		t.Fatal(err)
	}
	j := NodeJail(s, host, ws, stage, "", caches)
	for _, d := range []string{tools, java} {
		if slices.Contains(j.ReadOnly, d) {
			t.Errorf("an image jail shows the host's toolchain directory %s", d)
		}
	}
	if !slices.Contains(j.ReadOnly, ro) {
		t.Errorf("an image jail lost the operator's read-only path %s: %q", ro, j.ReadOnly)
	}
	env := NodeEnv(EnvSpec{Image: append(s.ImageEnv(), "GOCACHE=/image/cache"), Host: host, Caches: caches})
	for _, v := range []string{"GOMODCACHE", "GOCACHE", "CARGO_HOME"} {
		if got, _ := Lookup(env, v); !within(got, caches) {
			t.Errorf("%s=%q in an image jail, want a directory of the run's caches %s", v, got, caches)
		}
	}
	res, out := runOut(t, Cmd{Argv: []string{"sh", "-c", `echo hit > "$GOCACHE/x" && cat "$GOCACHE/x"`},
		Dir: ws, Env: env, Jail: j})
	if res.ExitCode != 0 || out != "hit\n" {
		t.Fatalf("exit %d, output %q", res.ExitCode, out)
	}
	if b, err := os.ReadFile(filepath.Join(caches, "gocache", "x")); err != nil || string(b) != "hit\n" {
		t.Errorf("the cache write did not reach the run's caches: %q, %v", b, err)
	}
}

// /var/tmp in an image jail: the image's link to /tmp is used as it is
// (bubblewrap 0.8 refuses to make a link over one, so the jail makes
// none), a directory there becomes a private tmpfs, and where the image
// has nothing the jail makes the link. Each is writable, and nothing
// reaches the image.
func TestImageJailVarTmp(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(t *testing.T, varTmp string)
		want string
	}{
		{name: "link", want: "link /tmp\n", edit: func(t *testing.T, varTmp string) {
			if err := os.Symlink("/tmp", varTmp); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "directory", want: "dir\n", edit: func(t *testing.T, varTmp string) {}},
		{name: "missing", want: "link /tmp\n", edit: func(t *testing.T, varTmp string) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, root := imageSandbox(t, func(root string) {
				varTmp := filepath.Join(root, "var", "tmp")
				if tc.name != "directory" {
					os.RemoveAll(varTmp)
				}
				tc.edit(t, varTmp)
			})
			before := treeListing(t, root)
			j := NodeJail(s, HostEnv(), t.TempDir(), "", "", "")
			res, out := imageRun(t, s, j, `
				if [ -L /var/tmp ]; then echo "link $(readlink /var/tmp)"; elif [ -d /var/tmp ]; then echo dir; fi
				echo v > /var/tmp/v && [ "$(cat /var/tmp/v)" = v ] || echo "NOT WRITABLE"`)
			if res.ExitCode != 0 || out != tc.want {
				t.Errorf("exit %d, output %q, want %q", res.ExitCode, out, tc.want)
			}
			if after := treeListing(t, root); after != before {
				t.Errorf("the image tree changed:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}
