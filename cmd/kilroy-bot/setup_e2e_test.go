package main

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/appsetup"
	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
)

var (
	setupOpenRE   = regexp.MustCompile(`Open (http://127\.0\.0\.1:\d+)/ in a browser`)
	setupActionRE = regexp.MustCompile(`<form action="([^"]+)"`)
	setupManiRE   = regexp.MustCompile(`name="manifest" value="([^"]*)"`)
	setupServeRE  = regexp.MustCompile(`(?m)^  (kilroy-bot serve .*)$`)
)

// TestSetupE2E: an operator runs setup against GitHub (Enterprise: the
// fake), presses the page's button, GitHub sends the browser back, and
// setup prints the install link and a serve command. That command, run as
// printed, starts a bot that GitHub's webhooks reach and that reports a
// pull request's checks with the App's new key.
func TestSetupE2E(t *testing.T) {
	gh := ghapptest.New(t)
	data := t.TempDir() + "/data"
	out, errOut := &syncBuffer{}, &syncBuffer{}
	exited := make(chan int, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		exited <- run(ctx, []string{"setup", "--public-url", publicURL, "--org", e2eOwner,
			"--github-url", gh.APIURL(), "--data-dir", data}, out, errOut)
	}()
	base := waitMatch(t, out, setupOpenRE, exited)

	page := httpGet(t, base+"/")
	action, manifest := setupActionRE.FindStringSubmatch(page), setupManiRE.FindStringSubmatch(page)
	if action == nil || manifest == nil {
		t.Fatalf("setup page has no manifest form:\n%s", page)
	}
	// The browser posts the form to GitHub, which redirects it back to
	// the setup page's callback.
	resp, err := http.PostForm(html.UnescapeString(action[1]), url.Values{"manifest": {html.UnescapeString(manifest[1])}})
	if err != nil {
		t.Fatal(err)
	}
	done, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(done), "is registered") {
		t.Fatalf("after GitHub: %d\n%s", resp.StatusCode, done)
	}
	select {
	case code := <-exited:
		if code != 0 {
			t.Fatalf("setup exited %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
		}
	case <-time.After(e2eWait):
		t.Fatalf("setup did not exit after the callback\nstdout:\n%s", out)
	}
	if posts := gh.ManifestPosts(); len(posts) != 1 || posts[0].Org != e2eOwner {
		t.Errorf("manifest posts %+v, want one for %s", posts, e2eOwner)
	}
	install := gh.URL() + "/github-apps/" + gh.AppSlug() + "/installations/new"
	if !strings.Contains(out.String(), "\n  "+install+"\n") {
		t.Errorf("setup did not print the install link %s:\n%s", install, out)
	}

	// Given only the data dir and the secret (as the compose file does),
	// serve uses the GitHub setup registered the App on.
	cfg, err := loadServeConfig([]string{"--data-dir", data}, envOf(map[string]string{
		"KILROY_PRIVATE_KEY_FILE": appsetup.FilesIn(data).PrivateKey(), "KILROY_WEBHOOK_SECRET_FILE": appsetup.FilesIn(data).WebhookSecret()}))
	if err != nil {
		t.Fatalf("serve with the data dir only: %v", err)
	}
	if cfg.GitHubURL != gh.APIURL() || cfg.AppID == 0 {
		t.Errorf("serve with the data dir only: GitHub URL %q, app id %d; want %q and the stored id", cfg.GitHubURL, cfg.AppID, gh.APIURL())
	}

	serveLine := setupServeRE.FindStringSubmatch(out.String())
	if serveLine == nil {
		t.Fatalf("setup printed no serve command:\n%s", out)
	}
	startPrintedServe(t, gh, strings.Fields(serveLine[1])[2:])
}

// startPrintedServe starts serve with args (as setup printed them) and
// checks that a pull request gets its checks.
func startPrintedServe(t *testing.T, gh *ghapptest.Server, args []string) {
	t.Helper()
	cfg, err := loadServeConfig(append(args, "--listen", "127.0.0.1:0", "--workers", "1"), envOf(nil))
	if err != nil {
		t.Fatalf("the printed serve command: %v\n%v", err, args)
	}
	cfg.RunDrain = time.Second
	if why := sandboxMissing(); why != "" {
		t.Logf("serve runs nodes without the sandbox here (--insecure-no-sandbox): %s", why)
		cfg.InsecureNoSandbox = true
	}
	e := &e2e{t: t, gh: gh, repo: gh.AddRepo(e2eOwner, e2eName), logs: &syncBuffer{}, cfg: cfg,
		secret: []byte(gh.ConvertedApps()[0].WebhookSecret)}
	e.repo.Commit(t, "main", map[string]string{"main.go": mainGo, ".kilroy/ci.dot": ciDOT(failingVet)}, "initial")
	gh.SetPermission(e2eOwner, e2eName, "alice", "write")
	e.start()
	t.Cleanup(e.stop)
	sha := e.repo.Commit(t, "feature-1", map[string]string{"README.md": "change\n"}, "change")
	e.deliver("pull_request", e.openPR("opened", pr{number: 1, sha: sha}))
	e.waitSettled(sha, "kilroy/ci", "kilroy/ci/vet")
	if sum := e.named(sha, "kilroy/ci")[0]; sum.Conclusion != "failure" {
		t.Errorf("kilroy/ci concluded %q, want failure (the vet finding)", sum.Conclusion)
	}
	e.waitIdle()
}

// waitMatch polls out until re matches and returns its first group; a
// command that exits first fails the test.
func waitMatch(t *testing.T, out *syncBuffer, re *regexp.Regexp, exited <-chan int) string {
	t.Helper()
	deadline := time.Now().Add(e2eWait)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			return m[1]
		}
		select {
		case code := <-exited:
			t.Fatalf("exited %d before printing %s:\n%s", code, re, out)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("no %s within %s:\n%s", re, e2eWait, out)
	return ""
}

func httpGet(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d\n%s", u, resp.StatusCode, b)
	}
	return string(b)
}

func TestSetupUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"setup"}, "--public-url is required"},
		{[]string{"setup", "--public-url", publicURL, "--listen", "0.0.0.0:0"}, "listens on this machine only"},
		{[]string{"setup", "--public-url", publicURL, "extra"}, `unexpected argument "extra"`},
	} {
		code, stdout, stderr := runCmd(tc.args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 saying %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
}
