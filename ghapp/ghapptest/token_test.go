package ghapptest_test

import (
	"crypto/rand"
	"crypto/rsa"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-github/v92/github"
	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
)

func TestAppJWT(t *testing.T) {
	s := ghapptest.New(t)
	s.AddRepo("acme", "widgets")
	key := appKey(t, s)
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	claims := func(iss any, iat, exp time.Duration) map[string]any {
		return map[string]any{"iss": iss, "iat": now.Add(iat).Unix(), "exp": now.Add(exp).Unix()}
	}
	tests := []struct {
		name string
		jwt  string
		want int
	}{
		{"numeric iss", signJWT(t, key, "RS256", claims(s.AppID(), -time.Minute, 9*time.Minute)), 200},
		{"string iss", signJWT(t, key, "RS256", claims(strconv.FormatInt(s.AppID(), 10), -time.Minute, 9*time.Minute)), 200},
		{"client id iss", signJWT(t, key, "RS256", claims(s.ClientID(), 0, time.Minute)), 200},
		{"other key", signJWT(t, other, "RS256", claims(s.AppID(), 0, time.Minute)), 401},
		{"alg not RS256", signJWT(t, key, "HS256", claims(s.AppID(), 0, time.Minute)), 401},
		{"expired", signJWT(t, key, "RS256", claims(s.AppID(), -10*time.Minute, -time.Minute)), 401},
		{"exp beyond ten minutes", signJWT(t, key, "RS256", claims(s.AppID(), 0, 11*time.Minute)), 401},
		{"iat in the future", signJWT(t, key, "RS256", claims(s.AppID(), 5*time.Minute, 9*time.Minute)), 401},
		{"wrong iss", signJWT(t, key, "RS256", claims(s.AppID()+1, 0, time.Minute)), 401},
		{"no exp", signJWT(t, key, "RS256", map[string]any{"iss": s.AppID()}), 401},
		{"not a JWT", "a.b.c", 401},
		{"installation token", installationToken(t, s, "acme", nil), 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, resp, err := client(t, s, tt.jwt).Apps.GetInstallation(t.Context(), s.InstallationID("acme"))
			if resp == nil {
				t.Fatalf("GetInstallation: %v", err)
			}
			if resp.StatusCode != tt.want {
				t.Errorf("status = %d, want %d (err %v)", resp.StatusCode, tt.want, err)
			}
		})
	}
}

func TestInstallationTokenScope(t *testing.T) {
	s := ghapptest.New(t)
	s.AddRepo("acme", "widgets")
	s.AddRepo("acme", "gadgets")
	app := client(t, s, appJWT(t, s))
	tok, resp, err := app.Apps.CreateInstallationToken(t.Context(), s.InstallationID("acme"),
		&github.InstallationTokenOptions{Repositories: []string{"widgets"},
			Permissions: &github.InstallationPermissions{Checks: github.Ptr("read")}})
	if err != nil {
		t.Fatalf("CreateInstallationToken: %v", err)
	}
	if resp.StatusCode != http.StatusCreated || !strings.HasPrefix(tok.GetToken(), "ghs_") {
		t.Errorf("status %d, token prefix %q; want 201, ghs_", resp.StatusCode, tok.GetToken()[:4])
	}
	if d := time.Until(tok.GetExpiresAt().Time); d < 59*time.Minute || d > time.Hour {
		t.Errorf("expires in %v, want an hour", d)
	}
	var names []string
	for _, r := range tok.Repositories {
		names = append(names, r.GetFullName())
	}
	if diff := cmp.Diff(names, []string{"acme/widgets"}); diff != "" {
		t.Errorf("token repositories (-got +want):\n%s", diff)
	}
	if got := tok.GetPermissions().GetChecks(); got != "read" {
		t.Errorf("token checks permission = %q, want read", got)
	}

	c := client(t, s, tok.GetToken())
	if _, _, err := c.Repositories.Get(t.Context(), "acme", "widgets"); err != nil {
		t.Errorf("repository in scope: %v", err)
	}
	if _, _, err := c.Repositories.Get(t.Context(), "acme", "gadgets"); statusOf(err) != 404 {
		t.Errorf("repository out of scope: err %v, want 404", err)
	}
	_, _, err = c.Checks.CreateCheckRun(t.Context(), "acme", "widgets", github.CreateCheckRunOptions{Name: "x", HeadSHA: strings.Repeat("a", 40)})
	if statusOf(err) != 403 {
		t.Errorf("check run with a read-only token: err %v, want 403", err)
	}

	got := s.Tokens()
	if len(got) != 1 || !cmp.Equal(got[0].Repositories, []string{"acme/widgets"}) || got[0].Revoked {
		t.Errorf("Tokens() = %v, want one unrevoked token for acme/widgets", got)
	}
	if strings.Contains(got[0].String(), tok.GetToken()) {
		t.Error("Token.String shows the token")
	}
}

func TestInstallationTokenRefusals(t *testing.T) {
	s := ghapptest.New(t)
	s.AddRepo("acme", "widgets")
	s.AddRepo("other", "thing")
	app := client(t, s, appJWT(t, s))
	id := s.InstallationID("acme")
	tests := []struct {
		name string
		id   int64
		opts *github.InstallationTokenOptions
		want int
	}{
		{"more than installed", id, &github.InstallationTokenOptions{
			Permissions: &github.InstallationPermissions{Administration: github.Ptr("write")}}, 422},
		{"other installation's repository", id, &github.InstallationTokenOptions{Repositories: []string{"thing"}}, 422},
		{"unknown repository id", id, &github.InstallationTokenOptions{RepositoryIDs: []int64{1}}, 422},
		{"unknown installation", 1, nil, 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := app.Apps.CreateInstallationToken(t.Context(), tt.id, tt.opts)
			if statusOf(err) != tt.want {
				t.Errorf("err %v, want status %d", err, tt.want)
			}
		})
	}
}

func TestRevokedExpiredUninstalledTokens(t *testing.T) {
	s, _, _, tok := setup(t)
	c := client(t, s, tok)
	if _, err := c.Apps.RevokeInstallationToken(t.Context()); err != nil {
		t.Fatalf("RevokeInstallationToken: %v", err)
	}
	if _, _, err := c.Repositories.Get(t.Context(), "acme", "widgets"); statusOf(err) != 401 {
		t.Errorf("revoked token: err %v, want 401", err)
	}
	if got := s.Tokens(); len(got) != 1 || !got[0].Revoked {
		t.Errorf("Tokens() = %v, want one revoked", got)
	}

	c = client(t, s, installationToken(t, s, "acme", nil))
	s.ExpireTokens()
	if _, _, err := c.Repositories.Get(t.Context(), "acme", "widgets"); statusOf(err) != 401 {
		t.Errorf("expired token: err %v, want 401", err)
	}

	c = client(t, s, installationToken(t, s, "acme", nil))
	id := s.InstallationID("acme")
	s.Uninstall("acme")
	if _, _, err := c.Repositories.Get(t.Context(), "acme", "widgets"); statusOf(err) != 401 {
		t.Errorf("token of a removed installation: err %v, want 401", err)
	}
	_, _, err := client(t, s, appJWT(t, s)).Apps.CreateInstallationToken(t.Context(), id, nil)
	if statusOf(err) != 404 {
		t.Errorf("token for a removed installation: err %v, want 404", err)
	}
}

// TestGhinstallation checks the fake against the library the bot
// authenticates with: key file, JWT, token exchange, installation lookup.
func TestGhinstallation(t *testing.T) {
	s, _, _, _ := setup(t)
	base := strings.TrimSuffix(s.APIURL(), "/")
	atr, err := ghinstallation.NewAppsTransportKeyFromFile(http.DefaultTransport, s.AppID(), s.PrivateKeyFile(t))
	if err != nil {
		t.Fatalf("apps transport: %v", err)
	}
	atr.BaseURL = base
	appClient, err := github.NewClient(github.WithEnterpriseURLs(s.APIURL(), s.APIURL()),
		github.WithHTTPClient(&http.Client{Transport: atr}))
	if err != nil {
		t.Fatal(err)
	}
	inst, _, err := appClient.Apps.GetRepositoryInstallation(t.Context(), "acme", "widgets")
	if err != nil {
		t.Fatalf("GetRepositoryInstallation: %v", err)
	}
	if inst.GetID() != s.InstallationID("acme") || inst.GetAppID() != s.AppID() {
		t.Errorf("installation %d of app %d, want %d of %d", inst.GetID(), inst.GetAppID(), s.InstallationID("acme"), s.AppID())
	}

	itr := ghinstallation.NewFromAppsTransport(atr, inst.GetID())
	itr.BaseURL = base
	c, err := github.NewClient(github.WithEnterpriseURLs(s.APIURL(), s.APIURL()),
		github.WithHTTPClient(&http.Client{Transport: itr}))
	if err != nil {
		t.Fatal(err)
	}
	repo, _, err := c.Repositories.Get(t.Context(), "acme", "widgets")
	if err != nil {
		t.Fatalf("Get with an installation transport: %v", err)
	}
	if repo.GetCloneURL() != s.CloneURL("acme", "widgets") {
		t.Errorf("clone_url = %q, want %q", repo.GetCloneURL(), s.CloneURL("acme", "widgets"))
	}
}
