package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/internal/gittest"
)

// A tree the store prepared (AddMountPoints) is bound at "/" whole: an
// image jail with every fixed mount of the jail (a git worktree, the stage
// and managed roots, caches, the agent runtime, resolv.conf) splits no
// directory of it, and remounts nothing read-only. bwrap would fail to
// make a mount point the tree lacked (it is read-only), so the jail
// running at all says the tree had every one; /var/tmp, /dev and HOME
// work as in any jail.
func TestImageJailOnPreparedTreeHasNoSplit(t *testing.T) {
	s, root := imageSandbox(t, func(root string) {
		if _, err := AddMountPoints(root); err != nil {
			t.Fatal(err)
		}
	})
	s.resolv = filepath.Join(t.TempDir(), "resolv.conf")
	if err := os.WriteFile(s.resolv, []byte("nameserver 192.0.2.53\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	repo := gittest.NewRepo(t, map[string]string{"a.txt": "a\n"})
	run := t.TempDir()
	ws := filepath.Join(run, "worktree")
	gittest.Git(t, repo, "worktree", "add", "-q", ws)
	j := NodeJail(s, HostEnv(), ws, filepath.Join(run, "nodes", "a"), filepath.Join(run, "managed"), filepath.Join(run, "cache"))
	j.Binds = []Bind{{Src: t.TempDir(), Dst: AgentModulesPath}, {Src: t.TempDir(), Dst: AgentLibPath}}

	env := NodeEnv(EnvSpec{Image: s.ImageEnv(), Host: HostEnv()})
	jl := j.jailed(Cmd{Env: env}, []string{"/bin/sh"})
	opts, files, err := j.options(jl.env, WorkspacePath, "/bin/sh")
	for _, f := range files {
		f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Join(opts, " ")
	if bad := slices.DeleteFunc([]string{"--remount-ro", "--tmpfs /dev ", "--size 1048576"}, func(o string) bool {
		return !strings.Contains(line, o)
	}); len(bad) > 0 {
		t.Errorf("options hold %q: a split or a remount on a prepared tree:\n%s", bad, line)
	}
	if !slices.Contains(opts, "/") || opts[2] != "/" || opts[0] != "--ro-bind-fd" {
		t.Errorf("the image is not bound at / first:\n%s", line)
	}

	res, out := imageRun(t, s, j, `
		cat a.txt /etc/resolv.conf
		echo v > /var/tmp/v && cat /var/tmp/v && echo t > /tmp/t && echo h > $HOME/h
		echo x > /dev/null && cat /dev/null && readlink /dev/random /dev/fd
		touch /dev/shm/s && ls -d /kilroy/git/worktrees/workspace /kilroy/agent-runtime/node_modules /kilroy/lib
		while read l; do case $l in kilroy:*) echo passwd-kilroy;; esac; done </etc/passwd
		for d in / /dev /etc /kilroy /home; do touch $d/new 2>/dev/null && echo "WROTE $d"; done; echo done`)
	want := "a\nnameserver 192.0.2.53\nv\nurandom\n/proc/self/fd\n/kilroy/agent-runtime/node_modules\n" +
		"/kilroy/git/worktrees/workspace\n/kilroy/lib\npasswd-kilroy\ndone\n"
	if res.ExitCode != 0 || out != want {
		t.Errorf("exit %d, output:\n%s\nwant:\n%s", res.ExitCode, out, want)
	}
	if _, err := os.Lstat(filepath.Join(root, "var", "tmp", "v")); err == nil {
		t.Errorf("a write to /var/tmp reached the image tree")
	}
}

// AddMountPoints adds only what the image lacks, never through a link or
// a file on the way, and changes nothing the image holds: a /home that is
// a link to a host directory gets no kilroy in it, a /dev/null the image
// has as a directory stays one, its own resolv.conf keeps its bytes.
func TestAddMountPointsOnlyAdds(t *testing.T) {
	root, host := t.TempDir(), t.TempDir()
	for _, d := range []string{"etc", "dev/null", "var/tmp"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "etc", "resolv.conf"), []byte("IMAGE\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(host, filepath.Join(root, "home")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "kilroy"), []byte("a file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	added, err := AddMountPoints(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/dev/fd", "/dev/full", "/dev/random", "/dev/shm", "/dev/stderr", "/dev/stdin", "/dev/stdout",
		"/dev/urandom", "/dev/zero", "/etc/group", "/etc/passwd", "/proc", "/tmp", "/workspace"}
	for _, mp := range MountPoints() {
		if !strings.HasPrefix(mp.Path, "/dev/") && !slices.Contains(want, mp.Path) && !within(mp.Path, "/home") &&
			!within(mp.Path, kilroyDir) && !within(mp.Path, "/var") && !within(mp.Path, "/etc") {
			t.Errorf("MountPoints holds %s, which this test does not expect: add it here", mp.Path)
		}
	}
	if !slices.Equal(added, want) {
		t.Errorf("added %q\nwant  %q", added, want)
	}
	if names, _ := os.ReadDir(host); len(names) != 0 {
		t.Errorf("made %v through the image's link /home", names)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "etc", "resolv.conf")); string(b) != "IMAGE\n" {
		t.Errorf("the image's resolv.conf now holds %q", b)
	}
	if fi, err := os.Lstat(filepath.Join(root, "dev", "null")); err != nil || !fi.IsDir() {
		t.Errorf("the image's /dev/null directory: %v, %v", fi, err)
	}
	if fi, err := os.Lstat(filepath.Join(root, "var", "tmp")); err != nil || !fi.IsDir() {
		t.Errorf("the image's /var/tmp directory: %v, %v", fi, err)
	}
	again, err := AddMountPoints(root)
	if err != nil || len(again) != 0 {
		t.Errorf("a second AddMountPoints added %q (%v), want nothing", again, err)
	}
}
