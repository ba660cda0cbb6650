package ghapp

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"strings"
	"time"

	"github.com/google/go-github/v92/github"
)

// renewBefore is how long before expiry a cached token is replaced, so a
// token handed out now outlives the git push or API call it is for.
const renewBefore = 10 * time.Minute

// Token is an installation access token. It formats itself without its
// value, so printing or logging one by mistake leaks nothing; use Value
// explicitly where the credential is needed.
type Token struct {
	Value     string
	ExpiresAt time.Time

	installation int64
}

// String describes the token without its value.
func (t Token) String() string {
	if t.Value == "" {
		return "ghapp.Token(none)"
	}
	return fmt.Sprintf("ghapp.Token(installation %d, expires %s, value redacted)",
		t.installation, t.ExpiresAt.UTC().Format(time.RFC3339))
}

// Format makes every fmt verb (%v, %+v, %#v, %s, %q, %d …) print String;
// without it, verbs that bypass String would print the fields.
func (t Token) Format(f fmt.State, _ rune) { io.WriteString(f, t.String()) }

// LogValue keeps the value out of slog output.
func (t Token) LogValue() slog.Value { return slog.StringValue(t.String()) }

// MarshalJSON keeps the value out of JSON: a token is never stored.
func (t Token) MarshalJSON() ([]byte, error) { return []byte(`"` + t.String() + `"`), nil }

// fresh reports whether t is usable for a while yet.
func (t Token) fresh(now time.Time) bool {
	return t.Value != "" && t.ExpiresAt.Sub(now) > renewBefore
}

// GitPermissions is what a run's git token needs: fetch and push
// contents (metadata read comes with every token). Check runs, comments
// and reactions go through the installation Client, not this token.
func GitPermissions() map[string]string { return map[string]string{"contents": "write"} }

// tokenRequest is the body of POST /app/installations/{id}/access_tokens.
// Our own type, not go-github's: its permissions are a struct that would
// silently drop a permission name it does not know.
type tokenRequest struct {
	Repositories []string          `json:"repositories,omitempty"`
	Permissions  map[string]string `json:"permissions,omitempty"`
}

// RepoToken mints a token for one repository of the installation (a name,
// or "owner/name") with perms (nil: GitPermissions). It lives an hour;
// revoke it with RevokeToken when the run ends.
func (a *App) RepoToken(ctx context.Context, installationID int64, repoName string, perms map[string]string) (Token, error) {
	if _, name, ok := strings.Cut(repoName, "/"); ok {
		repoName = name
	}
	if perms == nil {
		perms = GitPermissions()
	}
	req := &tokenRequest{Repositories: []string{repoName}, Permissions: maps.Clone(perms)}
	tok, err := a.createToken(ctx, installationID, req)
	if err != nil {
		return Token{}, fmt.Errorf("ghapp: token for repository %s of installation %d: %w", repoName, installationID, err)
	}
	a.log.LogAttrs(ctx, slog.LevelDebug, "github: minted repository token",
		slog.Int64("installation", installationID), slog.String("repo", repoName), slog.Any("token", tok))
	return tok, nil
}

// createToken asks GitHub for an installation token; req nil asks for the
// installation's full access.
func (a *App) createToken(ctx context.Context, installationID int64, body *tokenRequest) (Token, error) {
	// A repeated token request only mints a second token that nobody
	// receives and that expires within the hour.
	ctx = repeatable(ctx)
	u := fmt.Sprintf("app/installations/%d/access_tokens", installationID)
	var req any
	if body != nil {
		req = body
	}
	hreq, err := a.api.NewRequest(ctx, "POST", u, req)
	if err != nil {
		return Token{}, err
	}
	var out github.InstallationToken
	if _, err := a.api.Do(hreq, &out); err != nil {
		return Token{}, a.apiError("create installation token", Repo{}, err, ErrUninstalled)
	}
	if out.GetToken() == "" {
		return Token{}, fmt.Errorf("ghapp: create installation token: GitHub answered without a token")
	}
	return Token{Value: out.GetToken(), ExpiresAt: out.GetExpiresAt().Time, installation: installationID}, nil
}

// installationToken returns the installation's cached token, minting a
// new one when there is none, it expires soon, or it is stale (a value the
// caller saw refused).
func (a *App) installationToken(ctx context.Context, in *installation, stale string) (Token, error) {
	if tok, ok := in.cached(a.policy.now(), stale); ok {
		return tok, nil
	}
	// One mint at a time per installation; whoever waited finds the new
	// token cached.
	if err := in.minting.acquire(ctx); err != nil {
		return Token{}, err
	}
	defer in.minting.release()
	if tok, ok := in.cached(a.policy.now(), stale); ok {
		return tok, nil
	}
	tok, err := a.createToken(ctx, in.id, nil)
	if err != nil {
		return Token{}, fmt.Errorf("ghapp: token for installation %d: %w", in.id, err)
	}
	in.mu.Lock()
	in.token = tok
	in.mu.Unlock()
	a.log.LogAttrs(ctx, slog.LevelDebug, "github: minted installation token",
		slog.Int64("installation", in.id), slog.Any("token", tok))
	return tok, nil
}

func (in *installation) cached(now time.Time, stale string) (Token, bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.token.fresh(now) && in.token.Value != stale {
		return in.token, true
	}
	return Token{}, false
}

// RevokeToken revokes tok (DELETE /installation/token, authenticated with
// tok itself). A token GitHub no longer accepts counts as revoked.
func (a *App) RevokeToken(ctx context.Context, tok Token) error {
	if tok.Value == "" {
		return nil
	}
	gh, err := a.newGitHub(&retrying{policy: &a.policy,
		next: hostOnly(a.baseURL, &bearer{token: tok.Value, next: a.base}, a.base)})
	if err != nil {
		return err
	}
	if _, err := gh.Apps.RevokeInstallationToken(ctx); err != nil {
		if status(err) == 401 {
			return nil
		}
		return fmt.Errorf("ghapp: revoke token of installation %d: %w", tok.installation,
			a.apiError("revoke installation token", Repo{}, err, nil))
	}
	a.log.LogAttrs(ctx, slog.LevelDebug, "github: revoked token",
		slog.Int64("installation", tok.installation), slog.Any("token", tok))
	return nil
}
