package ghapp

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
)

// postManifest posts m to the fake's "new App" page as a browser would and
// returns the code and state GitHub sent to the redirect URL.
func postManifest(t *testing.T, gh *ghapptest.Server, path string, m Manifest) (code, state string) {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.PostForm(gh.URL()+path+"?state=s3", url.Values{"manifest": {string(b)}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("POST %s = %d, want a redirect", path, resp.StatusCode)
	}
	to, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	if got := to.Scheme + "://" + to.Host + to.Path; got != m.RedirectURL {
		t.Errorf("redirected to %s, want the manifest's redirect_url %s", got, m.RedirectURL)
	}
	return to.Query().Get("code"), to.Query().Get("state")
}

func TestConvertManifest(t *testing.T) {
	gh := ghapptest.New(t)
	m := NewManifest("kilroy-test", "https://kilroy.example/", "http://127.0.0.1:9/callback")
	code, state := postManifest(t, gh, "/organizations/octo/settings/apps/new", m)
	if state != "s3" {
		t.Errorf("state = %q, want s3", state)
	}
	creds, err := ConvertManifest(t.Context(), nil, gh.APIURL(), code)
	if err != nil {
		t.Fatal(err)
	}
	apps := gh.ConvertedApps()
	if len(apps) != 1 {
		t.Fatalf("converted %d Apps, want 1", len(apps))
	}
	got := []string{string(creds.PrivateKeyPEM), string(creds.WebhookSecret), creds.InstallURL(), apps[0].Post.Org}
	want := []string{string(gh.PrivateKeyPEM()), apps[0].WebhookSecret,
		gh.URL() + "/github-apps/" + gh.AppSlug() + "/installations/new", "octo"}
	if diff := cmp.Diff(got, want); diff != "" || creds.ID != gh.AppID() {
		t.Errorf("credentials (-got +want):\n%s\nid %d, want %d", diff, creds.ID, gh.AppID())
	}
	// The key works: the App can be built from it.
	if _, err := NewApp(Options{AppID: creds.ID, PrivateKeyPEM: creds.PrivateKeyPEM, BaseURL: gh.APIURL()}); err != nil {
		t.Errorf("NewApp with the converted key: %v", err)
	}

	_, err = ConvertManifest(t.Context(), nil, gh.APIURL(), code)
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "run setup again") {
		t.Errorf("second conversion of one code: %v, want ErrNotFound saying to run setup again", err)
	}
}

// TestManifestAsksForExactlyOurRights pins the App's rights: a change here
// is a change every operator must approve on their installation.
func TestManifestAsksForExactlyOurRights(t *testing.T) {
	m := NewManifest("k", "https://kilroy.example", "http://127.0.0.1:1/cb")
	got := map[string]any{"permissions": m.DefaultPermissions, "events": m.DefaultEvents,
		"hook": m.HookAttributes.URL, "url": m.URL}
	want := map[string]any{
		"permissions": map[string]string{"checks": "write", "contents": "write", "pull_requests": "read",
			"issues": "write", "merge_queues": "read", "metadata": "read"},
		"events": []string{"pull_request", "issue_comment", "check_run", "check_suite", "merge_group"},
		"hook":   "https://kilroy.example/webhooks/github",
		"url":    "https://kilroy.example",
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("manifest (-got +want):\n%s", diff)
	}
}

func TestConvertManifestBadCode(t *testing.T) {
	for _, code := range []string{"", "a/b", "x?y"} {
		if _, err := ConvertManifest(t.Context(), nil, "http://127.0.0.1:1/api/v3/", code); err == nil ||
			!strings.Contains(err.Error(), "redirect URL") {
			t.Errorf("code %q: %v, want an error naming the redirect URL's code", code, err)
		}
	}
}
