package ghapp

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestTokenNeverLeaks drives every path that handles a token (minting,
// renewal after a 401, revocation, retries, rate limits, failures) with
// debug logging on, and checks that no token value appears in the logs,
// in any error or in the token's own formatting.
func TestTokenNeverLeaks(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.AddPull("acme", "widgets", 3, f.sha, "main", "", []string{"a.go"})
	c := f.client(t)
	var texts []string
	note := func(err error) {
		if err != nil {
			texts = append(texts, err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err))
		}
	}

	rt := f.app.RepoTokens(f.inst, "widgets", nil)
	_, err := rt.Token(t.Context())
	note(err)
	tok, err := f.app.RepoToken(t.Context(), f.inst, "widgets", nil)
	note(err)
	texts = append(texts, fmt.Sprint(tok), fmt.Sprintf("%v %+v %#v %s %q %d", tok, tok, tok, tok, tok, tok))
	f.app.log.Info("a token passed to slog by mistake", "token", tok, "tokens", []Token{tok})

	_, err = c.PullRequest(t.Context(), f.r, 3)
	note(err)
	note(f.app.RevokeToken(t.Context(), tok))
	note(rt.Revoke(t.Context()))
	f.srv.ExpireTokens() // the next call gets a 401 and renews
	_, err = c.PullRequestFiles(t.Context(), f.r, 3)
	note(err)
	f.srv.FailNext("GET", "/api/v3/repos/*/*/pulls/3", defaultMaxAttempts, http.StatusBadGateway, nil)
	_, err = c.PullRequest(t.Context(), f.r, 3)
	note(err)
	f.srv.FailNext("GET", "/api/v3/repos/*/*/pulls/3", 1, http.StatusForbidden, map[string]string{"Retry-After": "5"})
	_, err = c.PullRequest(t.Context(), f.r, 3)
	note(err)
	f.srv.FailNext("GET", "/api/v3/repos/*/*/pulls/3", 1, http.StatusForbidden, primaryLimit(f.clock.Now().Add(time.Hour)))
	_, err = c.PullRequest(t.Context(), f.r, 3)
	note(err)
	_, err = c.FileContent(t.Context(), f.r, "missing", "")
	note(err)
	f.srv.Uninstall("acme")
	_, err = c.PullRequest(t.Context(), f.r, 3)
	note(err)
	_, err = f.app.RepoToken(t.Context(), f.inst, "widgets", nil)
	note(err)

	logs := f.logs.String()
	for _, want := range []string{"github: retrying", "github: rate limited", "minted", "revoked"} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q; the scenario did not cover that path:\n%s", want, logs)
		}
	}
	issued := f.srv.Tokens()
	if len(issued) < 4 {
		t.Fatalf("only %d tokens issued; the scenario did not mint enough to check", len(issued))
	}
	all := append(texts, logs)
	for _, it := range issued {
		v := it.Value()
		secret := strings.TrimPrefix(v, "ghs_")
		for _, s := range all {
			if strings.Contains(s, secret) {
				t.Errorf("token %v leaked into: %.300s", it, s)
			}
		}
	}
}

// TestCredentialsStayOnTheAPIHost follows a redirect to another host and
// checks that the installation token does not go with it.
func TestCredentialsStayOnTheAPIHost(t *testing.T) {
	var mu sync.Mutex
	var gotAuth []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gotAuth = append(gotAuth, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"number": 77, "head": {"sha": "abc"}}`)
	}))
	t.Cleanup(other.Close)
	redirect := func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if strings.HasSuffix(req.URL.Path, "/pulls/77") && req.URL.Host != mustHost(t, other.URL) {
				return &http.Response{StatusCode: http.StatusTemporaryRedirect, Status: "307",
					Header: http.Header{"Location": {other.URL + "/elsewhere/pulls/77"}},
					Body:   http.NoBody, Request: req}, nil
			}
			return next.RoundTrip(req)
		})
	}
	f := newFixture(t, redirect)
	pr, err := f.client(t).PullRequest(t.Context(), f.r, 77)
	if err != nil {
		t.Fatalf("PullRequest: %v", err)
	}
	if pr.Number != 77 {
		t.Fatalf("PullRequest = %+v, want the redirected answer", pr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(gotAuth) != 1 || gotAuth[0] != "" {
		t.Errorf("the other host saw Authorization %q, want none", gotAuth)
	}
}

func mustHost(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

func TestRateLimitedErrorMessage(t *testing.T) {
	err := error(&Error{Op: "get pull request #3", Repo: Repo{"acme", "widgets"}, Status: 403,
		Kind: &RateLimitedError{Wait: 90 * time.Second, Secondary: true}, Err: errors.New("403 limited")})
	var rl *RateLimitedError
	if !errors.As(err, &rl) || rl.Wait != 90*time.Second {
		t.Errorf("errors.As(%v) = %v, want the RateLimitedError", err, rl)
	}
	if want := "ghapp: get pull request #3 acme/widgets: 403 limited"; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
	if got := rl.Error(); got != "secondary rate limit: retry in 1m30s" {
		t.Errorf("RateLimitedError = %q", got)
	}
}
