// Package appsetup registers kilroy-bot's GitHub App from a manifest, so an
// operator never types its permissions, events, webhook URL or secret.
//
// The flow is GitHub's manifest flow, driven from a one-page web server on
// the operator's own machine (127.0.0.1):
//
//  1. The operator opens the local page. Its form posts the manifest
//     (ghapp.NewManifest: exactly the bot's permissions and events, the
//     webhook at the public URL) to GitHub's "new App" page, for the
//     operator's account or an organisation, with a random state.
//  2. The operator confirms on GitHub; GitHub redirects the browser to the
//     local /callback with a one-time code and the state.
//  3. The callback checks the state, trades the code for the App's id,
//     private key and webhook secret (ghapp.ConvertManifest) and stores
//     them in the data dir as files only their owner may read (Store).
//
// Nothing here reads flags or the environment: the command builds a Config.
package appsetup

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/kilroy-bot/kilroy-bot/ghapp"
)

// Config is one setup.
type Config struct {
	WebURL    string // GitHub's web root: https://github.com, or https://HOST for GitHub Enterprise
	APIURL    string // GitHub's REST root, for the code conversion
	Org       string // register the App under this organisation; "" for the operator's account
	Name      string // the App's name, which the operator may still change on GitHub
	PublicURL string // where the bot will listen publicly; webhooks go to PublicURL/webhooks/github
	Files     Files  // where the credentials are stored
	// HTTPClient calls GitHub's API; nil is http.DefaultClient.
	HTTPClient *http.Client
}

// Result is a registered App whose credentials are stored.
type Result struct {
	AppID      int64
	Slug       string
	InstallURL string
}

// Flow is the local web side of one setup. Make it with New, serve its
// Handler on 127.0.0.1, and wait on Done.
type Flow struct {
	cfg      Config
	base     string // the local server's root, http://127.0.0.1:PORT
	state    string
	manifest ghapp.Manifest

	once sync.Once
	done chan Result
}

// New prepares a flow served at base (the local server's root URL). It
// refuses to start when credentials are already stored, before the
// operator registers an App whose secrets would have nowhere to go.
func New(cfg Config, base string) (*Flow, error) {
	if err := cfg.Files.checkFree(); err != nil {
		return nil, err
	}
	if !httpURL(cfg.PublicURL) {
		return nil, fmt.Errorf("public URL %q: want the https:// address GitHub will deliver webhooks to", cfg.PublicURL)
	}
	if !httpURL(cfg.WebURL) {
		return nil, fmt.Errorf("GitHub web URL %q: want an absolute URL such as https://github.com", cfg.WebURL)
	}
	base = strings.TrimSuffix(base, "/")
	f := &Flow{cfg: cfg, base: base, state: randomState(), done: make(chan Result, 1)}
	f.manifest = ghapp.NewManifest(cfg.Name, cfg.PublicURL, base+"/callback")
	return f, nil
}

// Done delivers the Result once the credentials are stored.
func (f *Flow) Done() <-chan Result { return f.done }

// Manifest is the manifest the page posts.
func (f *Flow) Manifest() ghapp.Manifest { return f.manifest }

// NewAppURL is where the page's form posts: GitHub's "new App" page of the
// account or organisation, with the flow's state.
func (f *Flow) NewAppURL() string {
	return NewAppURL(f.cfg.WebURL, f.cfg.Org) + "?state=" + url.QueryEscape(f.state)
}

// NewAppURL is GitHub's "new App" page under web for org, or for the
// signed-in user when org is "".
func NewAppURL(web, org string) string {
	web = strings.TrimSuffix(web, "/")
	if org == "" {
		return web + "/settings/apps/new"
	}
	return web + "/organizations/" + url.PathEscape(org) + "/settings/apps/new"
}

func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

func randomState() string {
	b := make([]byte, 16)
	rand.Read(b) // never fails: see crypto/rand.Read
	return hex.EncodeToString(b)
}

// errState is a callback that did not come from this flow's form.
var errState = errors.New("the state does not match this setup's: open the setup page again and start from there")
