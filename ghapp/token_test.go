package ghapp

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNewAppRefusesBadOptions(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"unparsable key", Options{AppID: 1, PrivateKeyPEM: []byte("not a key")}, "private key"},
		{"no key", Options{AppID: 1}, "private key"},
		{"no App id", Options{PrivateKeyPEM: []byte("x")}, "App id"},
		{"relative base URL", Options{AppID: 1, PrivateKeyPEM: []byte("x"), BaseURL: "api/v3"}, "base URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewApp(tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewApp() error = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

// get is a GET of an API path with tok, for checking what a token may do.
func (f *fixture) get(t *testing.T, tok, path string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", f.srv.APIURL()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "token "+tok)
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestRepoTokenIsScopedAndRevocable(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.AddRepo("acme", "gadgets")

	tok, err := f.app.RepoToken(t.Context(), f.inst, "widgets", nil)
	if err != nil {
		t.Fatalf("RepoToken: %v", err)
	}
	if !strings.HasPrefix(tok.Value, "ghs_") || tok.ExpiresAt.IsZero() {
		t.Fatalf("RepoToken = %v, want a ghs_ token with an expiry", tok)
	}
	issued := f.srv.Tokens()
	last := issued[len(issued)-1]
	if diff := cmp.Diff(last.Repositories, []string{"acme/widgets"}); diff != "" {
		t.Errorf("token repositories (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(last.Permissions, map[string]string{"contents": "write", "metadata": "read"}); diff != "" {
		t.Errorf("token permissions (-got +want):\n%s", diff)
	}

	if got := f.get(t, tok.Value, "repos/acme/widgets"); got != http.StatusOK {
		t.Errorf("token on its repository: status %d, want 200", got)
	}
	if got := f.get(t, tok.Value, "repos/acme/gadgets"); got != http.StatusNotFound {
		t.Errorf("token on another repository: status %d, want 404", got)
	}

	if err := f.app.RevokeToken(t.Context(), tok); err != nil {
		t.Fatalf("RevokeToken: %v", err)
	}
	if got := f.get(t, tok.Value, "repos/acme/widgets"); got != http.StatusUnauthorized {
		t.Errorf("revoked token: status %d, want 401", got)
	}
	if err := f.app.RevokeToken(t.Context(), tok); err != nil {
		t.Errorf("revoking twice: %v, want nil (already unusable)", err)
	}
}

func TestRepoTokenNarrowsPermissions(t *testing.T) {
	f := newFixture(t, nil)
	if _, err := f.app.RepoToken(t.Context(), f.inst, "acme/widgets", map[string]string{"contents": "read"}); err != nil {
		t.Fatalf("RepoToken: %v", err)
	}
	issued := f.srv.Tokens()
	if got := issued[len(issued)-1].Permissions["contents"]; got != "read" {
		t.Errorf("contents permission = %q, want read", got)
	}
}

func TestRepoTokensReuseAndRevokeAll(t *testing.T) {
	f := newFixture(t, nil)
	rt := f.app.RepoTokens(f.inst, "widgets", nil)
	src := rt.Source()
	a, err := src(t.Context())
	if err != nil {
		t.Fatalf("first token: %v", err)
	}
	b, err := src(t.Context())
	if err != nil {
		t.Fatalf("second token: %v", err)
	}
	if a != b {
		t.Errorf("a fresh token was minted although the first had most of its hour left")
	}
	if n := len(f.requests("POST", "/access_tokens")); n != 1 {
		t.Errorf("minted %d tokens, want 1", n)
	}
	if err := rt.Revoke(t.Context()); err != nil {
		t.Fatalf("Revoke: %v", err)
	}
	if got := f.get(t, a, "repos/acme/widgets"); got != http.StatusUnauthorized {
		t.Errorf("token after Revoke: status %d, want 401", got)
	}
	c, err := src(t.Context())
	if err != nil || c == a {
		t.Errorf("token after Revoke = same %v (err %v), want a new one", c == a, err)
	}
}

func TestUninstalledInstallation(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.Uninstall("acme")
	if _, err := f.app.RepoToken(t.Context(), f.inst, "widgets", nil); !errors.Is(err, ErrUninstalled) {
		t.Errorf("RepoToken error = %v, want ErrUninstalled", err)
	}
	_, err := f.client(t).PullRequest(t.Context(), f.r, 1)
	if !errors.Is(err, ErrUninstalled) {
		t.Errorf("PullRequest error = %v, want ErrUninstalled", err)
	}
}

func TestUninstalledAfterTokenCached(t *testing.T) {
	f := newFixture(t, nil)
	c := f.client(t)
	if _, err := c.CollaboratorPermission(t.Context(), f.r, "octocat"); err != nil {
		t.Fatalf("CollaboratorPermission: %v", err)
	}
	f.srv.Uninstall("acme") // the cached token now gets 401, and no new one is made
	if _, err := c.CollaboratorPermission(t.Context(), f.r, "octocat"); !errors.Is(err, ErrUninstalled) {
		t.Errorf("error = %v, want ErrUninstalled", err)
	}
}

func TestExpiredTokenIsRenewed(t *testing.T) {
	f := newFixture(t, nil)
	c := f.client(t)
	if _, err := c.PullRequestFiles(t.Context(), f.r, 7); !errors.Is(err, ErrNotFound) {
		t.Fatalf("PullRequestFiles of a missing PR: %v, want ErrNotFound", err)
	}
	f.srv.ExpireTokens()
	f.srv.AddPull("acme", "widgets", 7, f.sha, "main", "", []string{"a.go"})
	got, err := c.PullRequestFiles(t.Context(), f.r, 7)
	if err != nil {
		t.Fatalf("PullRequestFiles after expiry: %v", err)
	}
	if diff := cmp.Diff(got, []string{"a.go"}); diff != "" {
		t.Errorf("files (-got +want):\n%s", diff)
	}
	if n := len(f.requests("POST", "/access_tokens")); n != 2 {
		t.Errorf("minted %d installation tokens, want 2 (one renewal after the 401)", n)
	}
}

func TestTokenFormatsRedacted(t *testing.T) {
	tok := Token{Value: "ghs_SuperSecretValue1234567890", installation: 7}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%d", "%x"} {
		if got := sprintf(verb, tok); strings.Contains(got, "SuperSecret") || strings.Contains(got, "5375706572") {
			t.Errorf("Sprintf(%q, token) = %q: leaks the value", verb, got)
		}
	}
	b, err := tok.MarshalJSON()
	if err != nil || strings.Contains(string(b), "SuperSecret") {
		t.Errorf("MarshalJSON = %s, %v: leaks the value", b, err)
	}
}

// TestRepoTokensRevokeATokenMintedAsTheCallerGaveUp: a caller whose
// context ends while GitHub issues its token (a run's background push
// stopped as the run finishes) gets an error, but the token GitHub issued
// is still revoked with the others.
func TestRepoTokensRevokeATokenMintedAsTheCallerGaveUp(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	f := newFixture(t, func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := next.RoundTrip(req)
			if req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/access_tokens") {
				cancel() // GitHub has issued the token; the caller gives up
				if err == nil && req.Context().Err() != nil {
					resp.Body.Close()
					return nil, req.Context().Err()
				}
			}
			return resp, err
		})
	})
	rt := f.app.RepoTokens(f.inst, "widgets", nil)
	if _, err := rt.Token(ctx); err == nil {
		t.Fatal("Token after its caller gave up: no error")
	}
	if err := rt.Revoke(t.Context()); err != nil {
		t.Fatalf("Revoke: %v", err)
	}
	toks := f.srv.Tokens()
	var repoTokens int
	for _, tok := range toks {
		if tok.Repositories == nil {
			continue
		}
		repoTokens++
		if !tok.Revoked {
			t.Errorf("%v issued as the caller gave up is not revoked", tok)
		}
	}
	if repoTokens != 1 {
		t.Errorf("%d repository tokens issued, want 1: %v", repoTokens, toks)
	}
}
