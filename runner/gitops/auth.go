package gitops

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
)

// withAuth asks the TokenSource for a fresh token and passes it to git as
// an Authorization header in a config file that exists only as an open
// descriptor: written to a file that is unlinked at once, handed to git as
// fd 3 and included with -c include.path=/dev/fd/3 (git's HTTP helper
// inherits the descriptor and reads it again). The token is never in an
// environment (which /proc/PID/environ shows), argv, URL or a file on
// disk. The header is scoped to the remote's origin so a redirect or
// another remote never receives it. The token and its encodings are
// registered as secrets for error redaction. The caller closes c.files.
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
	f, err := g.authFile(origin, "Authorization: Basic "+cred)
	if err != nil {
		return c, fmt.Errorf("gitops: pass the token for %s: %w", origin, err)
	}
	c.files = append(c.files, f)
	c.config = append(c.config, "include.path=/dev/fd/"+strconv.Itoa(2+len(c.files)))
	c.secrets = append(c.secrets, tok, cred)
	return c, nil
}

// authFile writes git config setting header for origin to an unlinked
// file and returns it open at its start.
func (g *Git) authFile(origin, header string) (*os.File, error) {
	f, err := os.CreateTemp(g.home, ".auth-*")
	if err != nil {
		return nil, err
	}
	rmErr := os.Remove(f.Name())
	_, werr := fmt.Fprintf(f, "[http %q]\n\textraHeader = %s\n", origin, header)
	_, serr := f.Seek(0, io.SeekStart)
	if err := errors.Join(rmErr, werr, serr); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
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
