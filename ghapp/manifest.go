package ghapp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-github/v92/github"
)

// Permissions are what kilroy-bot's App asks for, as GitHub names them:
// check runs (write), the repository to fetch and push run branches
// (contents write), pull requests to read their files and heads, issues to
// answer /kilroy comments (write), merge queues (read), without which
// GitHub sends no merge_group events, and metadata, which every App has.
func Permissions() map[string]string {
	return map[string]string{
		"checks":        "write",
		"contents":      "write",
		"pull_requests": "read",
		"issues":        "write",
		"merge_queues":  "read",
		"metadata":      "read",
	}
}

// MergeQueuePermission is the permission GitHub requires before it sends an
// App merge_group events.
const MergeQueuePermission = "merge_queues"

// Events are the webhook events kilroy-bot's App subscribes to.
// Installation events reach every App without a subscription.
func Events() []string {
	return []string{"pull_request", "issue_comment", "check_run", "check_suite", "merge_group"}
}

// Manifest is a GitHub App manifest, the JSON a user posts to GitHub's
// "new App" page to register an App in one step.
type Manifest struct {
	Name               string            `json:"name,omitempty"`
	URL                string            `json:"url"`
	Description        string            `json:"description,omitempty"`
	HookAttributes     HookAttributes    `json:"hook_attributes"`
	RedirectURL        string            `json:"redirect_url"`
	Public             bool              `json:"public"`
	DefaultPermissions map[string]string `json:"default_permissions"`
	DefaultEvents      []string          `json:"default_events"`
}

// HookAttributes is where GitHub delivers the App's webhooks.
type HookAttributes struct {
	URL    string `json:"url"`
	Active bool   `json:"active"`
}

// NewManifest is kilroy-bot's App: named name, its webhooks delivered to
// publicURL's /webhooks/github, GitHub's browser sent back to redirectURL
// with the code ConvertManifest takes. The App is private (installable
// only on the account that registers it).
func NewManifest(name, publicURL, redirectURL string) Manifest {
	base := strings.TrimSuffix(publicURL, "/")
	return Manifest{
		Name:               name,
		URL:                base,
		Description:        "Runs the Attractor pipelines in .kilroy/ on pull requests.",
		HookAttributes:     HookAttributes{URL: base + "/webhooks/github", Active: true},
		RedirectURL:        redirectURL,
		DefaultPermissions: Permissions(),
		DefaultEvents:      Events(),
	}
}

// AppCredentials are what GitHub hands over once, when an App is made from
// a manifest: its identity and its secrets.
type AppCredentials struct {
	ID            int64
	Slug          string
	HTMLURL       string // the App's page; installations start at HTMLURL + "/installations/new"
	PrivateKeyPEM []byte
	WebhookSecret []byte
}

// InstallURL is where the App is installed on an account.
func (c AppCredentials) InstallURL() string {
	return strings.TrimSuffix(c.HTMLURL, "/") + "/installations/new"
}

// ConvertManifest trades the code GitHub sent to the manifest's
// redirect_url for the new App's credentials (POST
// /app-manifests/{code}/conversions, which needs no authentication). The
// code works once, within an hour. baseURL is the REST API root, as in
// Options.
func ConvertManifest(ctx context.Context, hc *http.Client, baseURL, code string) (AppCredentials, error) {
	base, err := parseBaseURL(cmp.Or(baseURL, DefaultBaseURL))
	if err != nil {
		return AppCredentials{}, err
	}
	if code == "" || strings.ContainsAny(code, "/?#") {
		return AppCredentials{}, fmt.Errorf("ghapp: manifest code %q: want the code GitHub sent to the redirect URL", code)
	}
	u := base.String()
	gh, err := github.NewClient(github.WithHTTPClient(cmp.Or(hc, http.DefaultClient)),
		github.WithURLs(&u, &u), github.WithUserAgent("kilroy-bot"), github.WithDisableRateLimitCheck())
	if err != nil {
		return AppCredentials{}, fmt.Errorf("ghapp: GitHub client: %w", err)
	}
	cfg, _, err := gh.Apps.CompleteAppManifest(ctx, code)
	if err != nil {
		return AppCredentials{}, manifestError(err)
	}
	creds := AppCredentials{ID: cfg.GetID(), Slug: cfg.GetSlug(), HTMLURL: cfg.GetHTMLURL(),
		PrivateKeyPEM: []byte(cfg.GetPEM()), WebhookSecret: []byte(cfg.GetWebhookSecret())}
	if creds.ID <= 0 || len(creds.PrivateKeyPEM) == 0 || len(creds.WebhookSecret) == 0 {
		return AppCredentials{}, errors.New("ghapp: manifest conversion: GitHub's answer lacks the App id, key or webhook secret")
	}
	return creds, nil
}

// manifestError says what a failed conversion means: a 404 is a code that
// was used already, has expired or belongs to another GitHub.
func manifestError(err error) error {
	e := &Error{Op: "convert App manifest", Status: status(err), Err: err}
	if e.Status == http.StatusNotFound {
		e.Kind = ErrNotFound
		return fmt.Errorf("%w (a code works once and for an hour: run setup again)", e)
	}
	return e
}
