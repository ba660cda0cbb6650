package ghapp

import (
	"net/http"
	"net/url"
	"strings"
)

// hostOnly sends requests for the API host through auth and everything
// else (a redirect to another host, say) through plain, so credentials
// never leave the host they are for.
func hostOnly(api *url.URL, auth, plain http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if !sameHost(req.URL, api) {
			return plain.RoundTrip(req)
		}
		return auth.RoundTrip(req)
	})
}

func sameHost(u, api *url.URL) bool {
	return strings.EqualFold(u.Scheme, api.Scheme) && strings.EqualFold(u.Host, api.Host)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// installationAuth authenticates as an installation with the App's cached
// token. A 401 means the cached token died early (revoked, or the clock is
// off): it fetches a new one and tries once more.
type installationAuth struct {
	app  *App
	inst *installation
}

func (t *installationAuth) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	tok, err := t.app.installationToken(ctx, t.inst, "")
	if err != nil {
		closeBody(req)
		return nil, err
	}
	resp, err := t.app.base.RoundTrip(withToken(req, tok.Value))
	if err != nil || resp.StatusCode != http.StatusUnauthorized || !bodyReplayable(req) {
		return resp, err
	}
	discard(resp)
	fresh, err := t.app.installationToken(ctx, t.inst, tok.Value)
	if err != nil {
		return nil, err
	}
	retry := withToken(req, fresh.Value)
	if req.GetBody != nil {
		if retry.Body, err = req.GetBody(); err != nil {
			return nil, err
		}
	}
	return t.app.base.RoundTrip(retry)
}

// bearer authenticates every request with one fixed token (revocation
// must be made with the token itself).
type bearer struct {
	token string
	next  http.RoundTripper
}

func (t *bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	return t.next.RoundTrip(withToken(req, t.token))
}

// withToken is a copy of req carrying token; RoundTrippers must not change
// the request they are given.
func withToken(req *http.Request, token string) *http.Request {
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "token "+token)
	return r
}

func bodyReplayable(req *http.Request) bool {
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
