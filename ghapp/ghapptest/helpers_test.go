package ghapptest_test

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"
	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
)

// appKey parses the App key the way the bot would, from its PEM.
func appKey(t *testing.T, s *ghapptest.Server) *rsa.PrivateKey {
	t.Helper()
	block, _ := pem.Decode(s.PrivateKeyPEM())
	if block == nil {
		t.Fatal("PrivateKeyPEM is not PEM")
	}
	k, err := x509.ParsePKCS1PrivateKey(block.Bytes)
	if err != nil {
		t.Fatalf("parse App key: %v", err)
	}
	return k
}

// signJWT signs claims with key under alg's name (always RS256 math, so a
// wrong "alg" header is the only thing wrong).
func signJWT(t *testing.T, key *rsa.PrivateKey, alg string, claims map[string]any) string {
	t.Helper()
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("marshal JWT part: %v", err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	signing := enc(map[string]string{"alg": alg, "typ": "JWT"}) + "." + enc(claims)
	sum := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		t.Fatalf("sign JWT: %v", err)
	}
	return signing + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// appJWT is a valid App JWT, back-dated like GitHub recommends.
func appJWT(t *testing.T, s *ghapptest.Server) string {
	t.Helper()
	now := time.Now()
	return signJWT(t, appKey(t, s), "RS256", map[string]any{
		"iss": s.AppID(), "iat": now.Add(-time.Minute).Unix(), "exp": now.Add(9 * time.Minute).Unix(),
	})
}

// client is a go-github client for the fake authenticated with tok (a JWT
// or an installation token; both go as "Bearer").
func client(t *testing.T, s *ghapptest.Server, tok string) *github.Client {
	t.Helper()
	c, err := github.NewClient(github.WithEnterpriseURLs(s.APIURL(), s.APIURL()), github.WithAuthToken(tok))
	if err != nil {
		t.Fatalf("go-github client: %v", err)
	}
	return c
}

// installationToken gets a token for owner's installation through the API.
func installationToken(t *testing.T, s *ghapptest.Server, owner string, opts *github.InstallationTokenOptions) string {
	t.Helper()
	tok, _, err := client(t, s, appJWT(t, s)).Apps.CreateInstallationToken(t.Context(), s.InstallationID(owner), opts)
	if err != nil {
		t.Fatalf("CreateInstallationToken: %v", err)
	}
	return tok.GetToken()
}

// statusOf is the HTTP status of a go-github error, or 0.
func statusOf(err error) int {
	var e *github.ErrorResponse
	if errors.As(err, &e) {
		return e.Response.StatusCode
	}
	return 0
}

// recorder stands in for a test inside a test: it keeps the failures the
// fake reports instead of failing the real test, which still does the
// temporary directories, cleanup and logging.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) failures() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errors...)
}

// setup is a fake with one repository acme/widgets holding one commit on
// main, and a token for it.
func setup(t *testing.T) (*ghapptest.Server, *ghapptest.Repo, string, string) {
	t.Helper()
	s := ghapptest.New(t)
	repo := s.AddRepo("acme", "widgets")
	sha := repo.Commit(t, "main", map[string]string{"README.md": "# widgets\n", "main.go": "package main\n"}, "initial")
	return s, repo, sha, installationToken(t, s, "acme", nil)
}
