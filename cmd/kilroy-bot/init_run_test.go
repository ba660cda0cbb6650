package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/templates/templatestest"
)

// A newcomer's first hour, per kind of repository: `init` picks the
// template, `validate` is clean, `run` passes on the sound project, and
// a planted failure fails the right step with its finding on the line.
// Where a toolchain is missing the subtest says so in one line and skips.
func TestInitValidateRunEachKind(t *testing.T) {
	for _, p := range templatestest.Projects() {
		t.Run(p.Name, func(t *testing.T) {
			repo := newRepo(t, p.Files)
			needToolchain(t, p, repo)
			code, stdout, stderr := runCmd("init", "--repo", repo)
			if suggested := "kilroy-bot init --template " + p.Template; code == 2 && strings.Contains(stderr, suggested) {
				// No toolchain to detect: take the suggestion, as a user would.
				code, stdout, stderr = runCmd("init", "--repo", repo, "--template", p.Template)
			}
			if code != 0 || !strings.Contains(stdout, "wrote ") {
				t.Fatalf("init: exit %d\n%s%s", code, stdout, stderr)
			}
			if got, want := readFile(t, filepath.Join(repo, ".kilroy", "ci.dot")), templateContent(t, p.Template, ".kilroy/ci.dot"); got != want {
				t.Fatalf("init did not write the %s template", p.Template)
			}
			if code, stdout, stderr := runCmd("validate", "--repo", repo); code != 0 {
				t.Fatalf("validate: exit %d\n%s%s", code, stdout, stderr)
			}
			gitT(t, repo, "add", ".kilroy")
			gitT(t, repo, "commit", "--quiet", "-m", "Add kilroy pipeline")

			data := t.TempDir()
			if code, stdout, stderr := runCmd("run", "--repo", repo, "--data-dir", data, "--format", "text"); code != 0 {
				t.Fatalf("run on the sound project: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}

			for name, content := range p.Broken {
				writeTree(t, filepath.Join(repo, filepath.FromSlash(name)), content)
			}
			gitT(t, repo, "commit", "--quiet", "-am", "plant a failure")
			code, stdout, stderr = runCmd("run", "--repo", repo, "--data-dir", data, "--format", "text")
			if code != 1 || !strings.Contains(stdout, p.FailedNode+" failed") {
				t.Fatalf("run with the planted failure: exit %d, want 1 and %q failed\nstdout:\n%s\nstderr:\n%s", code, p.FailedNode, stdout, stderr)
			}
			if p.Finding != "" && !strings.Contains(stdout, p.Finding) {
				t.Errorf("the summary has no finding at %s:\n%s", p.Finding, stdout)
			}
		})
	}
}

// needToolchain skips, saying what is missing, unless p's tools are on
// PATH and its probe succeeds in repo. A probe that fails with the
// environment's python3 but works with the system's (a pyenv shim whose
// version lacks pytest) sets PYENV_VERSION=system for the test.
func needToolchain(t *testing.T, p templatestest.Project, repo string) {
	t.Helper()
	for _, tool := range p.Tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on PATH: the %s template needs it", tool, p.Template)
		}
	}
	if len(p.Probe) == 0 {
		return
	}
	var out []byte
	for _, extra := range [][]string{nil, {"PYENV_VERSION=system"}} {
		cmd := exec.Command(p.Probe[0], p.Probe[1:]...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), extra...)
		var err error
		if out, err = cmd.CombinedOutput(); err == nil {
			for _, kv := range extra {
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
			return
		}
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	t.Skipf("%s fails here, so the %s template cannot run: %s", strings.Join(p.Probe, " "), p.Template, line)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
