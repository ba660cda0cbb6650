package ghapptest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// installation is the App installed on one account.
type installation struct {
	id      int64
	account string
	created time.Time
}

// appKey is the App key of every server in the test binary. A 2048-bit key
// (what GitHub issues) can take a second or more to generate on a busy
// machine, and nothing is gained by each server having its own; it is made
// once, on first use, and never changes.
var appKey = sync.OnceValues(func() (*rsa.PrivateKey, error) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("generate App key: %w", err)
	}
	return k, nil
})

// AppID is the App's id, the JWT's "iss".
func (s *Server) AppID() int64 { return s.cfg.appID }

// AppSlug is the App's slug; its comments are by "<slug>[bot]".
func (s *Server) AppSlug() string { return s.cfg.appSlug }

// ClientID is the App's client id, which GitHub also accepts as "iss".
func (s *Server) ClientID() string { return s.cfg.clientID }

// PrivateKeyPEM is the App's private key in the PKCS#1 PEM form GitHub
// hands out.
func (s *Server) PrivateKeyPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{
		Type:  "RSA PRIVATE KEY",
		Bytes: x509.MarshalPKCS1PrivateKey(s.key),
	})
}

// PrivateKeyFile writes the App's key to a file in t's temporary directory
// and returns its path, for a bot configured with a key file.
func (s *Server) PrivateKeyFile(t testing.TB) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "app.private-key.pem")
	if err := os.WriteFile(p, s.PrivateKeyPEM(), 0o600); err != nil {
		t.Fatalf("ghapptest: write App key: %v", err)
	}
	return p
}

// InstallationID is the id of the App's installation on owner, which exists
// once owner has a repository. It fails the test otherwise.
func (s *Server) InstallationID(owner string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.st.byOwner[strings.ToLower(owner)]
	if !ok {
		s.t.Fatalf("ghapptest: no installation on %q: add a repository first", owner)
	}
	return id
}

// Uninstall removes the App from owner: its tokens stop working and new ones
// cannot be made, as after an "installation deleted" event.
func (s *Server) Uninstall(owner string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.st.byOwner[strings.ToLower(owner)]
	if !ok {
		s.t.Fatalf("ghapptest: no installation on %q", owner)
	}
	delete(s.st.byOwner, strings.ToLower(owner))
	delete(s.st.installations, id)
}

// installationLocked returns owner's installation, making it on first use.
func (s *Server) installationLocked(owner string) *installation {
	key := strings.ToLower(owner)
	if id, ok := s.st.byOwner[key]; ok {
		return s.st.installations[id]
	}
	in := &installation{id: s.nextIDLocked(), account: owner, created: time.Now().UTC()}
	s.st.installations[in.id] = in
	s.st.byOwner[key] = in.id
	return in
}

// getInstallation serves GET /app/installations/{id} (App JWT).
func (s *Server) getInstallation(w http.ResponseWriter, r *http.Request) error {
	if err := s.requireJWT(r); err != nil {
		return err
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return errNotFound()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.st.installations[id]
	if !ok {
		return errNotFound()
	}
	return writeJSON(w, http.StatusOK, s.installationJSON(in))
}

// getRepoInstallation serves GET /repos/{owner}/{repo}/installation (App JWT).
func (s *Server) getRepoInstallation(w http.ResponseWriter, r *http.Request) error {
	if err := s.requireJWT(r); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rs, ok := s.st.repos[repoKey(r.PathValue("owner"), r.PathValue("repo"))]
	if !ok {
		return errNotFound()
	}
	in, ok := s.st.installations[rs.installation]
	if !ok {
		return errNotFound()
	}
	return writeJSON(w, http.StatusOK, s.installationJSON(in))
}

func (s *Server) installationJSON(in *installation) map[string]any {
	api := strings.TrimSuffix(s.APIURL(), "/")
	return map[string]any{
		"id":                   in.id,
		"account":              userJSON(in.account, "Organization"),
		"app_id":               s.cfg.appID,
		"app_slug":             s.cfg.appSlug,
		"client_id":            s.cfg.clientID,
		"target_id":            userID(in.account),
		"target_type":          "Organization",
		"repository_selection": "selected",
		"permissions":          s.cfg.perms,
		"events":               []string{"check_run", "check_suite", "issue_comment", "pull_request", "push"},
		"access_tokens_url":    fmt.Sprintf("%s/app/installations/%d/access_tokens", api, in.id),
		"repositories_url":     api + "/installation/repositories",
		"html_url":             fmt.Sprintf("%s/organizations/%s/settings/installations/%d", s.URL(), in.account, in.id),
		"created_at":           in.created.Format(time.RFC3339),
		"updated_at":           in.created.Format(time.RFC3339),
		"suspended_at":         nil,
	}
}
