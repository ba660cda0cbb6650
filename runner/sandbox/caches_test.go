package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// With the run's cache directory, every cache variable points into it,
// whatever the host sets: no node gets the host's module or build caches.
// The policy's own value of a cache variable (the resolver's: the
// repository's cache, or a directory of the run the repository chose)
// wins over it; the host still wins for other variables.
func TestNodeEnvCaches(t *testing.T) {
	host := map[string]string{
		"HOME": "/home/real", "GOMODCACHE": "/host/mod", "GOCACHE": "/host/build", "CARGO_HOME": "/host/cargo",
		"PIP_CACHE_DIR": "/host/pip", "RUSTUP_HOME": "/host/rustup", "CARGO_TARGET_DIR": "/host/target",
	}
	spec := EnvSpec{Host: host, Caches: "/data/caches/1/octo/widgets/cache",
		Policy: map[string]string{
			"GOPATH":           "/run/pmr/go/gopath", // the repository chose its run's directory
			"GOMODCACHE":       "/run/pmr/go/gopath/pkg/mod",
			"CARGO_TARGET_DIR": "/run/pmr/cargo-target", // not a cache: the host's value wins
		}}
	got := lookups(NodeEnv(spec), "GOPATH", "GOMODCACHE", "GOCACHE", "CARGO_HOME", "PIP_CACHE_DIR",
		"npm_config_cache", "RUSTUP_HOME", "CARGO_TARGET_DIR")
	c := "/data/caches/1/octo/widgets/cache/"
	want := map[string]string{
		"GOPATH":           "/run/pmr/go/gopath",
		"GOMODCACHE":       "/run/pmr/go/gopath/pkg/mod",
		"GOCACHE":          c + "gocache",
		"CARGO_HOME":       c + "cargo-home",
		"PIP_CACHE_DIR":    c + "pip",
		"npm_config_cache": c + "npm",
		"RUSTUP_HOME":      "/host/rustup", // a toolchain, not a cache
		"CARGO_TARGET_DIR": "/host/target",
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("NodeEnv with caches (-got +want):\n%s", diff)
	}
}

// The jail of a node binds host directories from the bot's own
// configuration only: the operator's read-only directories, the PATH and
// toolchain directories of the bot's environment, the run's directories
// and its caches. The variables a repository's artifact policy sets (and
// so the node's final environment) decide no bind, whatever they name:
// /proc, /sys, a root-only directory, a directory holding a Unix socket.
func TestPlanBindsNothingFromTheNodeEnvironment(t *testing.T) {
	s := newTestSandbox(t, Config{ReadOnly: []string{t.TempDir()}})
	tools, java := t.TempDir(), t.TempDir()
	host := map[string]string{"PATH": tools + ":/usr/bin:/bin", "JAVA_HOME": java, "HOME": t.TempDir()}
	run := t.TempDir()
	ws, stage, managed, caches := filepath.Join(run, "worktree"), filepath.Join(run, "nodes", "a"),
		filepath.Join(run, "policy-managed-roots"), filepath.Join(t.TempDir(), "cache")
	os.MkdirAll(ws, 0o755)
	j := NodeJail(s, host, ws, stage, managed, caches)

	hostile := map[string]string{
		"VIRTUAL_ENV": "/proc", "NVM_DIR": "/sys", "JAVA_HOME": t.TempDir(), "PYENV_ROOT": t.TempDir(),
		"GOROOT": t.TempDir(), "VOLTA_HOME": t.TempDir(), "MAVEN_HOME": t.TempDir(), "RUSTUP_HOME": t.TempDir(),
		"GOMODCACHE": t.TempDir(), "CARGO_HOME": t.TempDir(),
	}
	extraPath := t.TempDir()
	env := NodeEnv(EnvSpec{Host: host, Policy: hostile, Caches: caches,
		Extra: map[string]string{"PATH": extraPath + ":" + host["PATH"], "JAVA_HOME": hostile["JAVA_HOME"]}})
	ms, err := j.plan(env)
	if err != nil {
		t.Fatal(err)
	}
	var bound []string
	for _, m := range ms {
		if m.kind == mROBind || m.kind == mRWBind {
			bound = append(bound, m.src)
		}
	}
	for name, d := range hostile {
		if slices.Contains(bound, canonical(d)) {
			t.Errorf("the plan binds %s=%s, which the repository set", name, d)
		}
	}
	if slices.Contains(bound, canonical(extraPath)) {
		t.Errorf("the plan binds the PATH entry %s of the node's environment", extraPath)
	}
	for _, want := range []string{tools, java, s.readOnly[0], ws, stage, managed, caches} {
		if !slices.Contains(bound, canonical(want)) {
			t.Errorf("the plan does not bind %s (bound: %s)", want, strings.Join(bound, " "))
		}
	}
}

// MakeCacheDirs makes one directory per cache variable and leaves a link
// a node planted where one would go as it is: not followed, not replaced.
func TestMakeCacheDirs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	if err := MakeCacheDirs(dir); err != nil {
		t.Fatal(err)
	}
	for name, p := range CacheEnv(dir) {
		if fi, err := os.Lstat(p); err != nil || !fi.IsDir() {
			t.Errorf("%s: %s is not a directory (%v)", name, p, err)
		}
	}
	elsewhere := t.TempDir()
	os.RemoveAll(filepath.Join(dir, "gocache"))
	os.Symlink(filepath.Join(elsewhere, "made"), filepath.Join(dir, "gocache"))
	if err := MakeCacheDirs(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(elsewhere, "made")); err == nil {
		t.Errorf("MakeCacheDirs made a directory through a planted link")
	}
}
