package appsetup

import (
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kilroy-bot/kilroy-bot/ghapp"
	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
)

// startFlow serves a flow for cfg on 127.0.0.1 and returns it with its root.
func startFlow(t *testing.T, cfg Config) (*Flow, string) {
	t.Helper()
	var h http.Handler
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	base := "http://" + srv.Listener.Addr().String()
	f, err := New(cfg, base)
	if err != nil {
		t.Fatal(err)
	}
	h = f.Handler()
	srv.Start()
	t.Cleanup(srv.Close)
	return f, base
}

func fakeConfig(gh *ghapptest.Server, dir string) Config {
	return Config{WebURL: gh.URL(), APIURL: gh.APIURL(), Org: "octo", Name: "kilroy-octo",
		PublicURL: "https://kilroy.example", Files: FilesIn(dir)}
}

var (
	actionRE   = regexp.MustCompile(`<form action="([^"]+)"`)
	manifestRE = regexp.MustCompile(`name="manifest" value="([^"]*)"`)
)

// submitForm loads the setup page and submits its form as a browser
// would, following GitHub's redirect back to the callback.
func submitForm(t *testing.T, base string) (status int, body string) {
	t.Helper()
	page := get(t, base+"/")
	action, manifest := actionRE.FindStringSubmatch(page), manifestRE.FindStringSubmatch(page)
	if action == nil || manifest == nil {
		t.Fatalf("setup page has no manifest form:\n%s", page)
	}
	resp, err := http.PostForm(html.UnescapeString(action[1]), url.Values{"manifest": {html.UnescapeString(manifest[1])}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func get(t *testing.T, u string) string {
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

func TestFlowStoresCredentials(t *testing.T) {
	gh := ghapptest.New(t)
	dir := t.TempDir()
	f, base := startFlow(t, fakeConfig(gh, dir))
	status, body := submitForm(t, base)
	if status != http.StatusOK || !strings.Contains(body, "/installations/new") {
		t.Fatalf("callback = %d, want 200 with the install link:\n%s", status, body)
	}
	res := <-f.Done()
	wantRes := Result{AppID: gh.AppID(), Slug: gh.AppSlug(), InstallURL: gh.URL() + "/github-apps/" + gh.AppSlug() + "/installations/new"}
	if diff := cmp.Diff(res, wantRes); diff != "" {
		t.Errorf("result (-got +want):\n%s", diff)
	}

	posts := gh.ManifestPosts()
	if len(posts) != 1 {
		t.Fatalf("%d manifests posted, want 1", len(posts))
	}
	var m ghapp.Manifest
	if err := json.Unmarshal(posts[0].Manifest, &m); err != nil {
		t.Fatal(err)
	}
	wantM := ghapp.NewManifest("kilroy-octo", "https://kilroy.example", base+"/callback")
	if diff := cmp.Diff(m, wantM); diff != "" || posts[0].Org != "octo" {
		t.Errorf("posted manifest for %q (-got +want):\n%s", posts[0].Org, diff)
	}

	files := FilesIn(dir)
	got := map[string]string{}
	for _, p := range files.paths() {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Stat(p)
		got[filepath.Base(p)] = fi.Mode().Perm().String() + " " + string(b)
	}
	want := map[string]string{
		"app-id":          "-rw------- " + strings.TrimSpace(jsonNumber(gh.AppID())) + "\n",
		"private-key.pem": "-rw------- " + string(gh.PrivateKeyPEM()),
		"webhook-secret":  "-rw------- " + gh.ConvertedApps()[0].WebhookSecret,
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("stored files (-got +want):\n%s", diff)
	}
	if fi, _ := os.Stat(files.Dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("%s has mode %v, want 0700", files.Dir, fi.Mode().Perm())
	}
}

func jsonNumber(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestCallbackRefusesForeignState(t *testing.T) {
	gh := ghapptest.New(t)
	dir := t.TempDir()
	_, base := startFlow(t, fakeConfig(gh, dir))
	for _, q := range []string{"?code=abc&state=forged", "?code=abc"} {
		resp, err := http.Get(base + "/callback" + q)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "state does not match") {
			t.Errorf("callback%s = %d %s, want 400 naming the state", q, resp.StatusCode, b)
		}
	}
	if _, err := os.Stat(FilesIn(dir).Dir); err == nil {
		t.Errorf("a refused callback created %s", FilesIn(dir).Dir)
	}
	for _, r := range gh.Requests() {
		if strings.Contains(r.Path, "app-manifests") {
			t.Errorf("a refused callback traded a code: %s %s", r.Method, r.Path)
		}
	}
}

func TestNewRefusesStoredApp(t *testing.T) {
	gh := ghapptest.New(t)
	dir := t.TempDir()
	files := FilesIn(dir)
	if err := os.MkdirAll(files.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(files.PrivateKey(), []byte("old key"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := New(fakeConfig(gh, dir), "http://127.0.0.1:1")
	if err == nil || !strings.Contains(err.Error(), "set up already") || !strings.Contains(err.Error(), files.Dir) {
		t.Errorf("New over a stored App: %v, want a refusal naming %s", err, files.Dir)
	}
	if err := files.Store(ghapp.AppCredentials{ID: 1, PrivateKeyPEM: []byte("k"), WebhookSecret: []byte("s")}); err == nil {
		t.Error("Store replaced an existing key")
	}
	if b, _ := os.ReadFile(files.PrivateKey()); string(b) != "old key" {
		t.Errorf("the existing key became %q", b)
	}
}

func TestNewAppURL(t *testing.T) {
	for _, tc := range []struct{ web, org, want string }{
		{"https://github.com", "", "https://github.com/settings/apps/new"},
		{"https://github.com/", "octo", "https://github.com/organizations/octo/settings/apps/new"},
		{"https://ghe.example.com", "eng", "https://ghe.example.com/organizations/eng/settings/apps/new"},
	} {
		if got := NewAppURL(tc.web, tc.org); got != tc.want {
			t.Errorf("NewAppURL(%q, %q) = %q, want %q", tc.web, tc.org, got, tc.want)
		}
	}
}

func TestNewChecksURLs(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{WebURL: "https://github.com", PublicURL: "kilroy.example"}, "public URL"},
		{Config{WebURL: "github.com", PublicURL: "https://kilroy.example"}, "GitHub web URL"},
	} {
		tc.cfg.Files = FilesIn(t.TempDir())
		if _, err := New(tc.cfg, "http://127.0.0.1:1"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want an error naming the %s", tc.cfg, err, tc.want)
		}
	}
}

// TestHandlerRefusesForeignHost: a request naming another host (a page
// that rebinds its own name to 127.0.0.1) gets 421 and no form; the
// flow's own address and localhost on its port get the page.
func TestHandlerRefusesForeignHost(t *testing.T) {
	gh := ghapptest.New(t)
	_, base := startFlow(t, fakeConfig(gh, t.TempDir()))
	port := base[strings.LastIndex(base, ":")+1:]
	for host, want := range map[string]int{
		strings.TrimPrefix(base, "http://"): http.StatusOK,
		"localhost:" + port:                 http.StatusOK,
		"evil.example:" + port:              http.StatusMisdirectedRequest,
		"evil.example":                      http.StatusMisdirectedRequest,
	} {
		req, err := http.NewRequest("GET", base+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want || (want != http.StatusOK) == manifestRE.Match(b) {
			t.Errorf("Host %s: %d (form shown: %v), want %d", host, resp.StatusCode, manifestRE.Match(b), want)
		}
	}
}

// The setup page says why the App asks for each permission, write access
// to contents above all, before anyone grants it.
func TestSetupPageExplainsPermissions(t *testing.T) {
	gh := ghapptest.New(t)
	_, base := startFlow(t, fakeConfig(gh, t.TempDir()))
	page := html.UnescapeString(get(t, base+"/"))
	for perm, level := range ghapp.Permissions() {
		if !strings.Contains(page, "<li><code>"+perm+": "+level+"</code>: ") {
			t.Errorf("the setup page does not say why it asks for %s: %s", perm, level)
		}
	}
	if !strings.Contains(page, "push the run branches (kilroy/run/PIPELINE/RUN_ID)") {
		t.Errorf("the setup page does not say contents: write is for the run branches:\n%s", page)
	}
}
