package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// Where the binder finds a bind source, and what it opens there: the
// host's own links are followed outside the writable roots (as /bin ->
// usr/bin is), never into a root or below one, and what is opened is the
// file at the place reported.
func TestBinderOpensWithoutPlantedLinks(t *testing.T) {
	host := t.TempDir()
	for _, d := range []string{"real/tools", "root/sub/bin", "root/cache"} {
		if err := os.MkdirAll(filepath.Join(host, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"rel":               "real",                          // the host's, relative
		"abs":               filepath.Join(host, "real"),     // the host's, absolute
		"into":              "root/sub",                      // into a writable root
		"root/sub/planted":  "../../real",                    // a node's, below the root
		"root/cache/escape": filepath.Join(host, "real"),     // a node's, absolute
		"chain":             "rel/../rel/tools/../../into/x", // through a link into the root
	} {
		if err := os.Symlink(target, filepath.Join(host, link)); err != nil {
			t.Fatal(err)
		}
	}
	root := filepath.Join(host, "root")
	b := newBinder(&Sandbox{paths: newPathCache(time.Hour)}, (&Jail{Workspace: root, Caches: filepath.Join(root, "cache")}).roots())
	tools := filepath.Join(host, "real", "tools")
	for _, tt := range []struct {
		path string
		want string // "" when nothing is bound
	}{
		{"real/tools", tools},
		{"rel/tools", tools},
		{"abs/tools", tools},
		{"into/bin", ""},
		{"root/sub/bin", ""}, // in a root: shown through it
		{"root/sub/planted/tools", ""},
		{"root/cache/escape/tools", ""},
		{"chain", ""},
		{"missing", ""},
	} {
		t.Run(tt.path, func(t *testing.T) {
			ms := openKept(b.bindHost(nil, filepath.Join(host, tt.path))) // as plan opens them
			defer closeMounts(ms)
			var got string
			if len(ms) == 1 {
				got = ms[0].dst
				if !sameFile(t, ms[0].fd, got) {
					t.Errorf("the descriptor is not the file at %s", got)
				}
			}
			if diff := cmp.Diff(got, tt.want); diff != "" || len(ms) > 1 {
				t.Errorf("bound at (-got +want):\n%s(%d mounts)", diff, len(ms))
			}
		})
	}
	// Below a root only without links, and never out of it.
	for rel, ok := range map[string]bool{"sub/bin": true, "sub/planted": false, "sub/planted/tools": false, "cache/escape": false, "..": false} {
		f, err := b.openBelow(b.roots[0], rel)
		if (err == nil) != ok {
			t.Errorf("openBelow(%s): %v, want it opened: %v", rel, err, ok)
		}
		if f != nil {
			f.Close()
		}
	}
	if len(b.roots) != 1 {
		t.Errorf("roots %v: the cache within the root is shown through it, not a root of its own", b.roots)
	}
}

func sameFile(t *testing.T, f *os.File, path string) bool {
	t.Helper()
	var a, b unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &a); err != nil {
		t.Fatal(err)
	}
	if err := unix.Lstat(path, &b); err != nil {
		t.Fatal(err)
	}
	return a.Dev == b.Dev && a.Ino == b.Ino
}

// A state dir below a link of the host's still gives every jail its /etc:
// the view is opened without following links.
func TestJailEtcWithStateDirBehindALink(t *testing.T) {
	link := filepath.Join(t.TempDir(), "state")
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	s := newTestSandbox(t, Config{StateDir: link})
	res, out := jailRun(t, context.Background(), &Jail{Sandbox: s, Workspace: t.TempDir()}, `grep '^kilroy:' /etc/passwd | cut -d: -f1`)
	if res.ExitCode != 0 || out != "kilroy\n" {
		t.Errorf("the jail's /etc/passwd: exit %d, %q; want the jail user", res.ExitCode, out)
	}
}
