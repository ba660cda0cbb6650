package imagetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// ToolchainDir is where GoLayer and NodeLayer put their toolchains in an
// image: a path no host has, so that a node that finds them there ran in
// the image.
const ToolchainDir = "/opt/kilroy-image-toolchain"

// PythonMarker is a module PythonLayer adds to the image's standard
// library: `python3 -c 'import kilroy_image_marker'` works only with the
// image's python3.
const PythonMarker = "kilroy_image_marker"

// GoLayer is the host's Go toolchain (its GOROOT, without its tests and
// docs) at ToolchainDir/go; its bin directory goes on the image's PATH.
func GoLayer(t testing.TB) (v1.Layer, string) {
	t.Helper()
	goroot := hostOutput(t, "go", "env", "GOROOT")
	key := "go-" + hostOutput(t, "go", "env", "GOVERSION") + "-" + Fingerprint(t, filepath.Join(goroot, "VERSION"), filepath.Join(goroot, "bin"))
	l := CachedLayer(t, key, func(dir string) {
		dst := filepath.Join(dir, ToolchainDir, "go")
		copyTree(t, goroot, dst)
		for _, d := range []string{"test", "doc", "api", "misc"} {
			os.RemoveAll(filepath.Join(dst, d))
		}
	})
	return l, filepath.Join(ToolchainDir, "go", "bin")
}

// NodeLayer is the host's node and npm (the npm package beside node's
// lib/node_modules) at ToolchainDir/node, with the libraries node loads;
// its bin directory goes on the image's PATH. It skips where the host has
// no node or npm.
func NodeLayer(t testing.TB) (v1.Layer, string) {
	t.Helper()
	node := lookHost(t, "node")
	npm := filepath.Join(filepath.Dir(filepath.Dir(node)), "lib", "node_modules", "npm")
	if _, err := os.Stat(filepath.Join(npm, "bin", "npm-cli.js")); err != nil {
		t.Skipf("no npm beside the host's node (%s): %v", node, err)
	}
	l := CachedLayer(t, "node-"+Fingerprint(t, node, filepath.Join(npm, "package.json")), func(dir string) {
		root := filepath.Join(dir, ToolchainDir, "node")
		mustMkdirAll(t, filepath.Join(root, "bin"))
		copyTree(t, node, filepath.Join(root, "bin", "node"))
		copyTree(t, npm, filepath.Join(root, "lib", "node_modules", "npm"))
		if err := os.Symlink("../lib/node_modules/npm/bin/npm-cli.js", filepath.Join(root, "bin", "npm")); err != nil {
			t.Fatal(err)
		}
		copyLibs(t, dir, node, map[string]bool{})
	})
	return l, filepath.Join(ToolchainDir, "node", "bin")
}

// PythonLayer is the distribution's python3 (/usr/bin/python3: Debian's,
// with its venv, ensurepip wheels and dist-packages such as pytest and
// setuptools) at the same paths, the libraries it and its extension
// modules load, and PythonMarker in its standard library. It skips
// where the host has no such python3.
func PythonLayer(t testing.TB) v1.Layer {
	t.Helper()
	exe, err := filepath.EvalSymlinks("/usr/bin/python3")
	if err != nil {
		t.Skipf("no /usr/bin/python3 here: %v", err)
	}
	ver := filepath.Base(exe) // python3.11
	stdlib := filepath.Join("/usr/lib", ver)
	paths := []string{exe, stdlib, "/usr/lib/python3/dist-packages", "/usr/share/python-wheels"}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("the host's python3 is not Debian's (no %s): %v", p, err)
		}
	}
	return CachedLayer(t, "python-"+Fingerprint(t, paths...), func(dir string) {
		for _, p := range paths {
			copyTree(t, p, filepath.Join(dir, p))
		}
		if err := os.Symlink(ver, filepath.Join(dir, "usr/bin/python3")); err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		copyLibs(t, dir, exe, seen)
		filepath.WalkDir(filepath.Join(dir, stdlib, "lib-dynload"), func(p string, d os.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(p, ".so") {
				copyLibs(t, dir, p, seen)
			}
			return nil
		})
		WriteFile(t, dir, filepath.Join(stdlib, PythonMarker+".py"), "IMAGE = True\n", 0o644)
	})
}

func hostOutput(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(lookHost(t, name), args...).Output()
	if err != nil {
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

// lookHost finds a program on the test's PATH, skipping without it.
func lookHost(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not on this host's PATH", name)
	}
	abs, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// copyTree copies a host file or tree as it is (links as links).
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	mustMkdirAll(t, filepath.Dir(dst))
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp -a %s %s: %v: %s", src, dst, err, out)
	}
}
