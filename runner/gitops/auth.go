package gitops

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
)

// withAuth asks the TokenSource for a fresh token and passes it to git as
// an Authorization header in git's environment config (GIT_CONFIG_COUNT),
// never in the URL, argv or a config file. The header is scoped to the
// remote's origin so a redirect or another remote never receives it. The
// token and its encoding are registered as secrets for error redaction.
func (g *Git) withAuth(ctx context.Context, c call, remoteURL string) (call, error) {
	if g.opts.TokenSource == nil {
		return c, nil
	}
	origin, ok := httpOrigin(remoteURL)
	if !ok {
		return c, nil // no HTTP transport, nothing to authenticate
	}
	tok, err := g.opts.TokenSource(ctx)
	if err != nil {
		return c, fmt.Errorf("gitops: fetch token for %s: %w", origin, err)
	}
	if tok == "" {
		return c, nil
	}
	cred := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + tok))
	c.env = append(c.env,
		"GIT_CONFIG_COUNT=1",
		"GIT_CONFIG_KEY_0=http."+origin+".extraHeader",
		"GIT_CONFIG_VALUE_0=Authorization: Basic "+cred,
	)
	c.secrets = append(c.secrets, tok, cred)
	return c, nil
}

// httpOrigin returns "scheme://host/" of an http(s) URL.
func httpOrigin(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", false
	}
	return u.Scheme + "://" + u.Host + "/", true
}

// checkRemoteURL refuses URLs that carry credentials: the token has exactly
// one way in, and a URL with userinfo would end up in logs and errors.
func checkRemoteURL(raw string) error {
	u, err := url.Parse(raw)
	if err == nil && u.User != nil {
		return fmt.Errorf("gitops: remote URL must not contain credentials (got user info for host %s)", u.Host)
	}
	if len(raw) > 0 && raw[0] == '-' {
		return fmt.Errorf("gitops: remote URL %q looks like an option", raw)
	}
	return nil
}
