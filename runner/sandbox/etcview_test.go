package sandbox

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The /etc view holds what anyone may read of /etc, at any depth, and the
// jail's own accounts; unreadable entries and hidden paths are absent;
// resolv.conf is a file.
func TestEtcView(t *testing.T) {
	etc := t.TempDir()
	files := map[string]os.FileMode{
		"hosts":                     0o644,
		"shadow":                    0o640,
		"ssl/certs/ca.pem":          0o644,
		"ssl/private/key.pem":       0o644, // under an unreadable directory
		"a/b/c/d/deep-secret":       0o600, // deeper than any fixed walk
		"a/b/c/d/deep-public":       0o444,
		"kilroy/app.pem":            0o644, // hidden
		"kilroy/public.conf":        0o644,
		"passwd":                    0o644,
		"security/opasswd":          0o600,
		"polkit-1/rules.d/00.rules": 0o644,
	}
	for name, mode := range files {
		p := filepath.Join(etc, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("content of "+name+"\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(filepath.Join(etc, "ssl/private"), 0o710)
	os.Chmod(filepath.Join(etc, "polkit-1/rules.d"), 0o700)
	// A link out of /etc, as systemd-resolved's: the view has a copy of
	// what it names, which nodes do not see.
	run := t.TempDir()
	os.WriteFile(filepath.Join(run, "resolv.conf"), []byte("nameserver 127.0.0.53\n"), 0o644)
	os.Symlink(filepath.Join(run, "resolv.conf"), filepath.Join(etc, "resolv.conf"))
	state := t.TempDir()
	hidden := []string{filepath.Join(etc, "kilroy/app.pem")}
	view, lock, err := etcView(state, etc, hidden, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	got := map[string]string{}
	filepath.WalkDir(view, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == view || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(view, p)
		if d.Type()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			got[rel] = "-> " + target
			return nil
		}
		b, _ := os.ReadFile(p)
		got[rel] = strings.SplitN(string(b), "\n", 2)[0]
		return nil
	})
	want := map[string]string{
		"hosts":               "content of hosts",
		"ssl/certs/ca.pem":    "content of ssl/certs/ca.pem",
		"a/b/c/d/deep-public": "content of a/b/c/d/deep-public",
		"kilroy/public.conf":  "content of kilroy/public.conf",
		"passwd":              "root:x:0:0:root:/root:/bin/sh",
		"group":               "root:x:0:",
		"resolv.conf":         "nameserver 127.0.0.53",
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("view of /etc (-got +want):\n%s", diff)
	}
	// Sandboxes share the view while /etc is unchanged; a change makes a
	// new one, and the next Sandbox removes views nobody holds (the
	// first stays: this process holds it) and unfinished ones.
	again, lock2, err := etcView(state, etc, hidden, nil)
	if err != nil || again != view {
		t.Fatalf("second view %q (err %v), want the first, %q", again, err, view)
	}
	defer lock2.Close()
	// A resolv.conf given (network public's) is the view's, in a view of
	// its own.
	given := []byte("nameserver 10.0.2.3\n")
	withResolv, lock4, err := etcView(state, etc, hidden, given)
	if err != nil || withResolv == view {
		t.Fatalf("view with a resolv.conf given %q (err %v), want one besides %q", withResolv, err, view)
	}
	defer lock4.Close()
	if b, _ := os.ReadFile(filepath.Join(withResolv, "resolv.conf")); string(b) != string(given) {
		t.Errorf("resolv.conf of the view with one given = %q, want %q", b, given)
	}
	os.WriteFile(filepath.Join(etc, "hosts"), []byte("changed\n"), 0o644)
	unheld, unfinished := filepath.Join(state, "etc-0123456789abcdef"), filepath.Join(state, "etc-tmp-999999999-1")
	for _, d := range []string{unheld, unfinished} {
		os.Mkdir(d, 0o755)
	}
	os.WriteFile(unheld+".lock", nil, 0o644)
	changed, lock3, err := etcView(state, etc, hidden, nil)
	if err != nil || changed == view {
		t.Fatalf("view after a change %q (err %v), want a new one", changed, err)
	}
	defer lock3.Close()
	if b, _ := os.ReadFile(filepath.Join(changed, "hosts")); string(b) != "changed\n" {
		t.Errorf("new view's hosts = %q", b)
	}
	for p, want := range map[string]bool{view: true, unheld: false, unheld + ".lock": false, unfinished: false} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s: exists = %v, want %v", p, err == nil, want)
		}
	}
}

// Nothing is mounted below /etc: the view is one bind, whatever PATH or
// the operator's read-only directories name under /etc, so what the view
// leaves out stays out (and no start pays a mount per masked entry).
func TestJailEtcIsOneMount(t *testing.T) {
	for _, tt := range []struct {
		name     string
		readOnly []string
	}{
		{"default", nil},
		{"read_only under /etc", []string{"/etc/ssl", "/etc"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestSandbox(t, Config{ReadOnly: tt.readOnly})
			j := &Jail{Sandbox: s, Workspace: t.TempDir(), ReadOnly: s.readOnly}
			res, out := jailRun(t, context.Background(), j, `
				[ "$(hostname)" = kilroy-sandbox ] || { echo UNJAILED; exit 99; }
				awk '$5 ~ "^/etc(/|$)" { print "MOUNT " $5 }' /proc/self/mountinfo
				find /etc ! -type l ! -perm -o=r -print 2>&1 | sed 's/^/UNREADABLE /'
				cat /etc/shadow >/dev/null 2>&1 && echo SHADOW-READ
				id -un`)
			if res.ExitCode != 0 {
				t.Fatalf("exit %d: %s", res.ExitCode, out)
			}
			if got, want := strings.TrimSpace(out), "MOUNT /etc\n"+JailUser; got != want {
				t.Errorf("in the jail (-got +want):\n%s", cmp.Diff(got, want))
			}
		})
	}
}

// A Sandbox holds its view for its whole life: the garbage collector does
// not release the lock (which would let another Sandbox remove the view
// under running nodes).
func TestSandboxHoldsItsEtcView(t *testing.T) {
	state := t.TempDir()
	s, err := New(Config{PATH: HostEnv()["PATH"], StateDir: state})
	if err != nil {
		t.Skipf("sandbox unavailable: %v", err)
	}
	for range 3 {
		runtime.GC()
	}
	f, err := os.Open(s.etc + ".lock")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
		t.Errorf("the view %s is not held after a garbage collection", s.etc)
	}
	runtime.KeepAlive(s)
}
