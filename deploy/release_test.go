package deploy

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The release workflow (.github/workflows/release.yml) has never run, so
// its steps are run here as far as they can without GitHub: the version
// check, and the check that a build of the tagged commit prints the tag.

// releaseStep is the run script of the release workflow's step name.
func releaseStep(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../.github/workflows/release.yml")
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			Steps []struct{ Name, Run string }
		}
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatalf("release.yml: %v", err)
	}
	for _, s := range wf.Jobs["release"].Steps {
		if s.Name == name {
			return s.Run
		}
	}
	t.Fatalf("release.yml has no step %q", name)
	return ""
}

func TestReleaseVersionCheck(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed: the workflow's steps are bash")
	}
	script := releaseStep(t, "Check the version")
	for version, ok := range map[string]bool{
		"v1.2.3": true, "v0.1.0": true, "v1.0.0-rc.1": true,
		"v2.0.0": false, "v10.1.0": false, "1.2.3": false, "v1.2": false, "v1.2.3 ": false, "latest": false, "": false,
	} {
		cmd := exec.Command("bash", "-c", script)
		cmd.Env = append(os.Environ(), "VERSION="+version)
		out, err := cmd.CombinedOutput()
		if (err == nil) != ok {
			t.Errorf("VERSION=%q: passed %v, want %v\n%s", version, err == nil, ok, out)
		}
	}
}

// A tagged commit, built as the workflow builds it, prints its tag: what
// `go install …@vX` users and the release's binaries will show. The
// workflow's own check line runs in a clone of this checkout tagged
// v0.9.9 (the go command takes v2 and later only for a module path ending
// in /v2, …). Skipped with -short: it builds kilroy-bot.
func TestReleaseBuildPrintsTag(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test builds kilroy-bot")
	}
	for _, tool := range []string{"bash", "git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed: the release build needs it", tool)
		}
	}
	var check string
	for _, line := range strings.Split(releaseStep(t, "Build the binaries"), "\n") {
		if strings.Contains(line, "version | grep") {
			check = strings.TrimSpace(line)
		}
	}
	if !strings.Contains(check, "/tmp/kilroy-bot") {
		t.Fatalf("the build step has no `go build -o /tmp/kilroy-bot … version | grep` check line: %q", check)
	}
	tmp := t.TempDir()
	check = strings.ReplaceAll(check, "/tmp/kilroy-bot", filepath.Join(tmp, "kilroy-bot"))

	clone := taggedClone(t, tmp, "v0.9.9")

	cmd := exec.Command("bash", "-c", "set -eo pipefail\n"+check)
	cmd.Dir = clone
	// The workflow's machine stamps version control information, as the
	// go command does by default; a GOFLAGS=-buildvcs=false here must not
	// hide it.
	cmd.Env = append(os.Environ(), "VERSION=v0.9.9", "GOFLAGS=-buildvcs=true")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		b, _ := exec.Command(filepath.Join(tmp, "kilroy-bot"), "version").CombinedOutput()
		t.Fatalf("the release build check failed: %v\n%s\nversion says: %s", err, out.String(), b)
	}
}

// taggedClone clones this checkout into dir/clone and tags its head with
// version; it skips the test when this is not a git checkout.
func taggedClone(t *testing.T, dir, version string) string {
	t.Helper()
	clone := filepath.Join(dir, "clone")
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "GIT_") }),
			"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
			"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.invalid")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Skipf("git %s: %v (not a checkout?): %s", strings.Join(args, " "), err, out)
		}
	}
	git("..", "clone", "--quiet", "--no-hardlinks", ".", clone)
	git(clone, "tag", version)
	return clone
}
