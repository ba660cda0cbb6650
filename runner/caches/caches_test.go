package caches

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Names from payloads and paths never leave their place in the layout:
// no "..", no separator, no name of the layout's own; GitHub's names stay
// readable, compared without case; two names never meet.
func TestSanitize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"octo", "octo"},
		{"Octo", "octo"},
		{"widgets.js", "widgets.js"},
		{"my_repo-2", "my_repo-2"},
	}
	for _, tt := range tests {
		if got := Sanitize(tt.in); got != tt.want {
			t.Errorf("Sanitize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	seen := map[string]string{}
	for _, in := range []string{"..", ".", "", "...", "a/b", "a_b", "_a_b", "../../etc", "_all", "local", "a\x00b", "a b", "octo", "Octo/"} {
		got := Sanitize(in)
		if got == "" || got == "." || got == ".." || strings.ContainsAny(got, "/\x00") || got == allName || got == localName {
			t.Errorf("Sanitize(%q) = %q: not one safe path element", in, got)
		}
		if other, dup := seen[got]; dup && !strings.EqualFold(other, in) {
			t.Errorf("Sanitize(%q) = Sanitize(%q) = %q", in, other, got)
		}
		seen[got] = in
	}
}

func TestDir(t *testing.T) {
	root := "/data/caches"
	tests := []struct {
		scope       Scope
		inst        int64
		owner, name string
		want        string
	}{
		{ScopeRepository, 7, "Octo", "Widgets", "/data/caches/7/octo/widgets"},
		{"", 7, "octo", "widgets", "/data/caches/7/octo/widgets"},
		{ScopeInstallation, 7, "octo", "widgets", "/data/caches/7/_all/_all"},
		{ScopeInstallation, 8, "octo", "widgets", "/data/caches/8/_all/_all"},
	}
	for _, tt := range tests {
		if got := Dir(root, tt.scope, tt.inst, tt.owner, tt.name); got != tt.want {
			t.Errorf("Dir(%q, %d, %q, %q) = %q, want %q", tt.scope, tt.inst, tt.owner, tt.name, got, tt.want)
		}
	}
	for _, bad := range [][2]string{{"..", ".."}, {"../..", "x"}, {"octo", "../../../../tmp"}} {
		got := Dir(root, ScopeRepository, 7, bad[0], bad[1])
		if rel, err := filepath.Rel(filepath.Join(root, "7"), got); err != nil || strings.Count(rel, "/") != 1 || strings.HasPrefix(rel, "..") {
			t.Errorf("Dir(%q, %q) = %s: not two levels under the installation", bad[0], bad[1], got)
		}
	}
}

func TestLocalDir(t *testing.T) {
	a := LocalDir("/data/caches", "/home/u/src/acme/app")
	b := LocalDir("/data/caches", "/home/u/work/acme/app")
	if !strings.HasPrefix(a, "/data/caches/local/acme/app-") || a == b {
		t.Errorf("LocalDir: %s and %s, want two directories under /data/caches/local/acme/app-<hash>", a, b)
	}
	if d := LocalDir("/data/caches", "/"); filepath.Dir(filepath.Dir(filepath.Dir(d))) != "/data/caches" {
		t.Errorf("LocalDir of / = %s: not three levels under the root", d)
	}
}

// A run holds its caches: the sweep's TryLock fails until it releases
// them, and Open records the use.
func TestOpenHoldsTheCaches(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "7", "octo", "widgets")
	if _, ok, err := TryLock(dir); ok || err != nil {
		t.Fatalf("TryLock of caches never opened: ok %v, err %v; want neither", ok, err)
	}
	before := time.Now().Add(-time.Second)
	release, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(Bound(dir), "gomodcache")); err != nil || !fi.IsDir() {
		t.Errorf("Open made no gomodcache: %v", err)
	}
	if last, err := LastUse(dir); err != nil || last.Before(before) {
		t.Errorf("LastUse = %v, %v; want after %v", last, err, before)
	}
	if _, ok, err := TryLock(dir); ok || err != nil {
		t.Errorf("TryLock while a run holds the caches: ok %v, err %v; want not ok", ok, err)
	}
	release()
	unlock, ok, err := TryLock(dir)
	if !ok || err != nil {
		t.Fatalf("TryLock after release: ok %v, err %v", ok, err)
	}
	unlock()
}
