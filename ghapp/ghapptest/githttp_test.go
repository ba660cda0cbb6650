package ghapptest_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"
	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
)

// git runs a client git the way DESIGN.md asks the bot to: no system or
// global config, and the token only in an http.extraHeader passed through
// the environment. An empty token sends no credentials.
func git(t *testing.T, dir, token string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "git", args...)
	cmd.Dir = dir
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull, "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=bot", "GIT_AUTHOR_EMAIL=bot@example.com",
		"GIT_COMMITTER_NAME=bot", "GIT_COMMITTER_EMAIL=bot@example.com",
	}
	if token != "" {
		basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token))
		cmd.Env = append(cmd.Env, "GIT_CONFIG_COUNT=1",
			"GIT_CONFIG_KEY_0=http.extraHeader", "GIT_CONFIG_VALUE_0=Authorization: Basic "+basic)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func mustGit(t *testing.T, dir, token string, args ...string) string {
	t.Helper()
	out, err := git(t, dir, token, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(out)
}

func TestGitCloneAndPush(t *testing.T) {
	s, repo, sha, tok := setup(t)
	dir := filepath.Join(t.TempDir(), "clone")
	mustGit(t, "", tok, "clone", "-q", s.CloneURL("acme", "widgets"), dir)
	if got := mustGit(t, dir, "", "rev-parse", "HEAD"); got != sha {
		t.Errorf("cloned HEAD = %s, want %s", got, sha)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "README.md")); err != nil || string(b) != "# widgets\n" {
		t.Errorf("README.md = %q, %v", b, err)
	}

	if err := os.WriteFile(filepath.Join(dir, "new.txt"), []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Incompressible and over git's 1 MiB http.postBuffer, so the push is
	// sent chunked, which net/http/cgi alone would refuse.
	big := make([]byte, 2<<20)
	rand.Read(big)
	if err := os.WriteFile(filepath.Join(dir, "big.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	mustGit(t, dir, "", "add", "new.txt", "big.bin")
	mustGit(t, dir, "", "commit", "-q", "-m", "checkpoint")
	mustGit(t, dir, tok, "push", "-q", "origin", "HEAD:refs/heads/kilroy/run/ci/r1")
	local := mustGit(t, dir, "", "rev-parse", "HEAD")
	if got := repo.Ref(t, "kilroy/run/ci/r1"); got != local {
		t.Errorf("pushed branch = %q, want %s", got, local)
	}
	if got := repo.Git(t, "show", "kilroy/run/ci/r1:new.txt"); got != "new" {
		t.Errorf("pushed new.txt = %q", got)
	}

	// GitHub keeps refs/pull/* to itself.
	if out, err := git(t, dir, tok, "push", "-q", "origin", "HEAD:refs/pull/1/head"); err == nil {
		t.Errorf("push to refs/pull/1/head succeeded:\n%s", out)
	}
	// A fetch right after a commit made by the test sees it.
	next := repo.Commit(t, "main", map[string]string{"README.md": ghapptest.Deleted}, "remove readme")
	mustGit(t, dir, tok, "fetch", "-q", "origin", "main")
	if got := mustGit(t, dir, "", "rev-parse", "FETCH_HEAD"); got != next {
		t.Errorf("fetched main = %s, want %s", got, next)
	}
	if out, err := git(t, dir, "", "cat-file", "-e", next+":README.md"); err == nil {
		t.Errorf("README.md still in %s after Deleted:\n%s", next, out)
	}
}

func TestGitAuthRefused(t *testing.T) {
	s, _, _, good := setup(t)
	s.AddRepo("acme", "gadgets")
	scoped := installationToken(t, s, "acme", &github.InstallationTokenOptions{Repositories: []string{"gadgets"}})
	readOnly := installationToken(t, s, "acme", &github.InstallationTokenOptions{
		Permissions: &github.InstallationPermissions{Contents: github.Ptr("read")}})
	revoked := installationToken(t, s, "acme", nil)
	if _, err := client(t, s, revoked).Apps.RevokeInstallationToken(t.Context()); err != nil {
		t.Fatal(err)
	}
	clone := filepath.Join(t.TempDir(), "clone")
	mustGit(t, "", good, "clone", "-q", s.CloneURL("acme", "widgets"), clone)

	tests := []struct {
		name   string
		token  string
		push   bool
		status int
	}{
		{"no token", "", false, 401},
		{"wrong token", "ghs_" + strings.Repeat("x", 36), false, 401},
		{"revoked token", revoked, false, 401},
		{"token for another repository", scoped, false, 404},
		{"read-only token pushing", readOnly, true, 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(s.Requests())
			var out string
			var err error
			if tt.push {
				out, err = git(t, clone, tt.token, "push", "-q", "origin", "HEAD:refs/heads/other")
			} else {
				out, err = git(t, "", tt.token, "clone", "-q", s.CloneURL("acme", "widgets"), filepath.Join(t.TempDir(), "c"))
			}
			if err == nil {
				t.Fatalf("git succeeded:\n%s", out)
			}
			reqs := s.Requests()[before:]
			if len(reqs) == 0 || reqs[0].Status != tt.status {
				t.Errorf("requests %+v, want the first answered %d", reqs, tt.status)
			}
			if tt.token != "" && strings.Contains(out, tt.token) {
				t.Error("git output shows the token")
			}
		})
	}
	if _, err := git(t, clone, readOnly, "fetch", "-q", "origin"); err != nil {
		t.Errorf("fetch with a read-only token: %v", err)
	}
}
