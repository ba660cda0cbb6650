//go:build unix

package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// plantSetuidDOT copies id into the repository's module cache and makes
// it setuid: inside the jail the bit would do nothing (bubblewrap mounts
// nosuid), but the file would stay on the host's disk with it.
const plantSetuidDOT = `digraph ci {
  start [shape=Mdiamond]
  plant [shape=parallelogram, tool_command="cp /usr/bin/id \"$GOMODCACHE/kilroy-suid\" && chmod 4755 \"$GOMODCACHE/kilroy-suid\""]
  done [shape=Msquare]
  start -> plant -> done
}
`

// TestServeE2ENoSetuidFromNodes (issue 23, item 9): with serve running as
// root, a node's chmod 4755 in its cache left a setuid-root program on the
// host that any local user could run, the data dir being open to them (an
// operator's mkdir gives 0755). Now the jail's seccomp filter refuses the
// bit (the node fails, saying so) and serve closes the data dir (0700)
// when it starts, so another user reaches nothing under it either.
func TestServeE2ENoSetuidFromNodes(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the attack needs serve to run as root (a node's files are then root's on the host); these tests do not run as root")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) is not installed: the test looks at the data dir as another user with it")
	}
	e := newE2E(t, e2eOptions{deferStart: true, files: map[string]string{"main.go": mainGo, ".kilroy/ci.dot": plantSetuidDOT}})
	if e.cfg.InsecureNoSandbox {
		t.Skip("no sandbox here: the node would run as the test's own user")
	}
	// An operator's data dir, reachable by others as mkdir leaves it (the
	// test's temporary directories are 0700, which would hide the attack).
	for d := e.cfg.DataDir; d != "/"; d = filepath.Dir(d) {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if filepath.Dir(d) == filepath.Clean(os.TempDir()) {
			break
		}
	}
	e.start()

	sha := e.repo.Commit(t, "feature-5", map[string]string{"README.md": "change\n"}, "change")
	e.deliver("pull_request", e.openPR("opened", pr{number: 5, sha: sha}))
	e.waitSettled(sha, "kilroy/ci")
	c := e.named(sha, "kilroy/ci")
	if len(c) == 0 || c[len(c)-1].Conclusion != "failure" || !strings.Contains(c[len(c)-1].Text+c[len(c)-1].Summary, "Operation not permitted") {
		t.Errorf("want the planting run to fail with chmod's \"Operation not permitted\"; got %+v", c)
	}
	filepath.WalkDir(e.cfg.DataDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if info, err := d.Info(); err == nil && info.Mode()&(fs.ModeSetuid|fs.ModeSetgid) != 0 && info.Mode().IsRegular() {
			t.Errorf("a set-id file in the data dir: %s (%v)", p, info.Mode())
		}
		return nil
	})
	if dm, err := os.Stat(e.cfg.DataDir); err != nil || dm.Mode().Perm() != 0o700 {
		t.Errorf("the data dir's mode is %v (%v), want 0700", dm.Mode().Perm(), err)
	}
	out, err := exec.Command(setpriv, "--reuid=10001", "--regid=10001", "--clear-groups", "--", "ls", filepath.Join(e.cfg.DataDir, "caches")).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Permission denied") {
		t.Errorf("user 10001 listing the caches: %v, want permission denied; output:\n%s", err, out)
	}
}
