package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

// modulePath is this module's path, as `go install …@vX` names it.
const modulePath = "github.com/kilroy-bot/kilroy-bot"

// `go install github.com/kilroy-bot/kilroy-bot/cmd/kilroy-bot@vX`, the
// README's install command once a release is tagged, works and installs a
// binary that prints vX. With no GitHub here, the tagged commit is served
// as a module proxy serves it (the .info, .mod and .zip files the go
// command fetches, the zip made from the git tag as the proxy makes it),
// from a directory, in front of the module cache's own download cache for
// the dependencies, so nothing leaves the machine. What a user's install
// adds, the checksum database's word on each module, cannot be had here.
// Skipped with -short: it builds kilroy-bot.
func TestReleaseGoInstallAtTag(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test builds kilroy-bot")
	}
	for _, tool := range []string{"git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed: the install needs it", tool)
		}
	}
	// A version no release will have, and no other test process uses.
	version := fmt.Sprintf("v0.9.9-installtest.%d", os.Getpid())
	tmp := t.TempDir()
	clone := taggedClone(t, tmp, version)

	goEnv := func(name string) string {
		out, err := exec.Command("go", "env", name).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", name, err)
		}
		return strings.TrimSpace(string(out))
	}
	// The module cache is the one this machine's builds use, so the
	// dependencies are compiled already (the build cache keys on source
	// paths); what the install extracts of this version goes at the end.
	modcache := goEnv("GOMODCACHE")
	deps := filepath.Join(modcache, "cache", "download")
	t.Cleanup(func() {
		os.RemoveAll(filepath.Join(modcache, filepath.FromSlash(modulePath)+"@"+version))
		old, _ := filepath.Glob(filepath.Join(deps, filepath.FromSlash(modulePath), "@v", version+".*"))
		for _, f := range old {
			os.Remove(f)
		}
	})

	// The proxy's files for modulePath@version.
	dir := filepath.Join(tmp, "proxy", filepath.FromSlash(modulePath), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	if err := zip.CreateFromVCS(&z, module.Version{Path: modulePath, Version: version}, clone, version, ""); err != nil {
		t.Fatalf("module zip of the tag: %v", err)
	}
	gomod, err := os.ReadFile(filepath.Join(clone, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	info, _ := json.Marshal(map[string]any{"Version": version, "Time": time.Now().UTC().Format(time.RFC3339)})
	for name, b := range map[string][]byte{
		"list": []byte(version + "\n"), version + ".info": info, version + ".mod": gomod, version + ".zip": z.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	gobin := filepath.Join(tmp, "bin")
	cmd := exec.Command("go", "install", modulePath+"/cmd/kilroy-bot@"+version)
	cmd.Dir = tmp // outside any module, as a user types it
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "GOPROXY=") || strings.HasPrefix(kv, "GOFLAGS=") ||
			strings.HasPrefix(kv, "GOSUMDB=") || strings.HasPrefix(kv, "GOTOOLCHAIN=") || strings.HasPrefix(kv, "GOBIN=")
	}),
		"GOPROXY=file://"+filepath.Join(tmp, "proxy")+",file://"+deps,
		// Nothing from the network: the checksum database cannot be asked
		// (the tag exists only here; the dependencies come from this
		// machine's own module cache, checked when they were downloaded),
		// and no other Go toolchain is fetched.
		"GOSUMDB=off", "GOTOOLCHAIN=local",
		"GOBIN="+gobin, "GOFLAGS=-modcacherw")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install …@%s: %v\n%s", version, err, out)
	}
	out, err := exec.Command(filepath.Join(gobin, "kilroy-bot"), "version").CombinedOutput()
	if err != nil || !strings.Contains(" "+string(out)+" ", " "+version+" ") {
		t.Errorf("the installed kilroy-bot's version: %v\n%s\nwant it to name %s", err, out, version)
	}
}
