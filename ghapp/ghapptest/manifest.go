package ghapptest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// The manifest flow, as GitHub runs it: a browser posts a manifest to the
// "new App" page, the user confirms, GitHub redirects to the manifest's
// redirect_url with a code, and the App's server trades the code for the
// App's credentials. The fake skips the confirmation: the post redirects at
// once. Every App it makes is the fake's one App (its id, slug and key),
// with a fresh webhook secret.

// manifestCodeTTL is how long GitHub honours a manifest code.
const manifestCodeTTL = time.Hour

// ManifestPost is one manifest a browser posted to the "new App" page.
type ManifestPost struct {
	Org      string          // the organisation's login; "" for a personal App
	State    string          // the state query parameter, sent back with the code
	Manifest json.RawMessage // the manifest as posted
}

// ConvertedApp is an App made by trading a manifest code.
type ConvertedApp struct {
	Post          ManifestPost
	WebhookSecret string
}

// pendingManifest is a code not yet traded.
type pendingManifest struct {
	post    ManifestPost
	expires time.Time
}

// manifestBody is the part of a manifest the fake checks.
type manifestBody struct {
	Name           string `json:"name"`
	URL            string `json:"url"`
	RedirectURL    string `json:"redirect_url"`
	HookAttributes *struct {
		URL    string `json:"url"`
		Active *bool  `json:"active"`
	} `json:"hook_attributes"`
	DefaultPermissions map[string]string `json:"default_permissions"`
	DefaultEvents      []string          `json:"default_events"`
}

// ManifestPosts returns every manifest posted so far, in order.
func (s *Server) ManifestPosts() []ManifestPost {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.st.manifestPosts)
}

// ConvertedApps returns every App made from a manifest code, in order.
func (s *Server) ConvertedApps() []ConvertedApp {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.st.converted)
}

// newAppFromManifest serves POST /settings/apps/new and
// /organizations/{org}/settings/apps/new: a browser's form post. It answers
// a bad manifest with 422 and a plain-text reason, a good one with a
// redirect to its redirect_url carrying code and state.
func (s *Server) newAppFromManifest(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form: "+err.Error(), http.StatusBadRequest)
		return
	}
	raw := r.PostForm.Get("manifest")
	m, err := checkManifest([]byte(raw))
	if err != nil {
		http.Error(w, "Invalid GitHub App configuration: "+err.Error(), http.StatusUnprocessableEntity)
		return
	}
	post := ManifestPost{Org: r.PathValue("org"), State: r.URL.Query().Get("state"), Manifest: json.RawMessage(raw)}
	code := randomHex(10)
	s.mu.Lock()
	s.st.manifestPosts = append(s.st.manifestPosts, post)
	s.st.manifestCodes[code] = &pendingManifest{post: post, expires: time.Now().Add(manifestCodeTTL)}
	s.mu.Unlock()
	to, _ := url.Parse(m.RedirectURL) // checked by checkManifest
	q := to.Query()
	q.Set("code", code)
	if post.State != "" {
		q.Set("state", post.State)
	}
	to.RawQuery = q.Encode()
	http.Redirect(w, r, to.String(), http.StatusFound)
}

// checkManifest refuses what GitHub refuses: no url, a webhook without a
// URL, unknown permissions or access levels, events without the permission
// they need. A redirect_url is required here, since the fake has no App
// page to send the browser to instead.
func checkManifest(raw []byte) (manifestBody, error) {
	var m manifestBody
	d := json.NewDecoder(bytes.NewReader(raw))
	if err := d.Decode(&m); err != nil {
		return m, fmt.Errorf("manifest is not JSON: %v", err)
	}
	var problems []string
	if !absoluteURL(m.URL) {
		problems = append(problems, "url must be an absolute URL")
	}
	if !absoluteURL(m.RedirectURL) {
		problems = append(problems, "redirect_url must be an absolute URL")
	}
	if h := m.HookAttributes; h != nil && (h.Active == nil || *h.Active) && !absoluteURL(h.URL) {
		problems = append(problems, "hook_attributes.url must be an absolute URL")
	}
	problems = append(problems, permissionProblems(m.DefaultPermissions)...)
	problems = append(problems, eventProblems(m.DefaultEvents, m.DefaultPermissions)...)
	if len(problems) > 0 {
		return m, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return m, nil
}

func absoluteURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// knownPermissions are the repository permissions a manifest may ask for
// (the ones kilroy-bot could plausibly want, and their neighbours).
var knownPermissions = []string{"actions", "administration", "checks", "contents", "deployments",
	"issues", "merge_queues", "metadata", "pages", "pull_requests", "statuses", "workflows"}

func permissionProblems(perms map[string]string) []string {
	var out []string
	for _, name := range sortedKeys(perms) {
		switch {
		case !slices.Contains(knownPermissions, name):
			out = append(out, fmt.Sprintf("default_permissions: unknown permission %q", name))
		case perms[name] != "read" && perms[name] != "write":
			out = append(out, fmt.Sprintf("default_permissions.%s: %q is not read or write", name, perms[name]))
		}
	}
	return out
}

// eventNeeds is the permission each event needs (any of them).
var eventNeeds = map[string][]string{
	"check_run":     {"checks"},
	"check_suite":   {"checks"},
	"issue_comment": {"issues", "pull_requests"},
	"issues":        {"issues"},
	"merge_group":   {"merge_queues"}, // GitHub: "Merge queues" repository permission, read
	"pull_request":  {"pull_requests"},
	"push":          {"contents"},
}

func eventProblems(events []string, perms map[string]string) []string {
	var out []string
	for _, ev := range events {
		needs, ok := eventNeeds[ev]
		if !ok {
			out = append(out, fmt.Sprintf("default_events: unknown event %q", ev))
			continue
		}
		if !slices.ContainsFunc(needs, func(p string) bool { return perms[p] != "" }) {
			out = append(out, fmt.Sprintf("default_events: %s needs the %s permission", ev, strings.Join(needs, " or ")))
		}
	}
	return out
}

// convertManifest serves POST /app-manifests/{code}/conversions. It needs
// no authentication; a code works once, within the hour.
func (s *Server) convertManifest(w http.ResponseWriter, r *http.Request) error {
	code := r.PathValue("code")
	s.mu.Lock()
	p, ok := s.st.manifestCodes[code]
	delete(s.st.manifestCodes, code)
	if !ok || time.Now().After(p.expires) {
		s.mu.Unlock()
		return errNotFound()
	}
	app := ConvertedApp{Post: p.post, WebhookSecret: randomHex(20)}
	s.st.converted = append(s.st.converted, app)
	s.mu.Unlock()

	var m manifestBody
	json.Unmarshal(app.Post.Manifest, &m) // checked when posted
	owner, typ := app.Post.Org, "Organization"
	if owner == "" {
		owner, typ = "octocat", "User"
	}
	now := time.Now().UTC().Format(time.RFC3339)
	return writeJSON(w, http.StatusCreated, map[string]any{
		"id": s.cfg.appID, "slug": s.cfg.appSlug, "node_id": fmt.Sprintf("A_%d", s.cfg.appID),
		"owner": userJSON(owner, typ), "name": m.Name, "description": "",
		"external_url": m.URL, "html_url": s.URL() + "/github-apps/" + s.cfg.appSlug,
		"created_at": now, "updated_at": now,
		"permissions": m.DefaultPermissions, "events": m.DefaultEvents,
		"client_id": s.cfg.clientID, "client_secret": randomHex(20),
		"webhook_secret": app.WebhookSecret, "pem": string(s.PrivateKeyPEM()),
	})
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails: see crypto/rand.Read
	return hex.EncodeToString(b)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
