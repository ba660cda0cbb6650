package runpage_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/runpage"
)

func newKeys(t *testing.T, secrets ...string) *runpage.Keys {
	t.Helper()
	bs := make([][]byte, len(secrets))
	for i, s := range secrets {
		bs[i] = []byte(s)
	}
	k, err := runpage.NewKeys(bs...)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

const otherRunID = "01J9Z8Q4M6V3N5R7T9W1X3Y5Z8"

func TestKeys(t *testing.T) {
	current := newKeys(t, "new-webhook-secret", "old-webhook-secret")
	old := newKeys(t, "old-webhook-secret")
	stranger := newKeys(t, "someone-elses-secret")

	tok := current.Token(runID)
	// The documented construction, computed here on its own.
	mac := func(key []byte, msg string) []byte {
		h := hmac.New(sha256.New, key)
		h.Write([]byte(msg))
		return h.Sum(nil)
	}
	key := mac([]byte("new-webhook-secret"), "kilroy run page key")
	if want := base64.RawURLEncoding.EncodeToString(mac(key, "kilroy-run-page:"+runID)[:16]); tok != want {
		t.Errorf("Token = %q, want %q: base64url(HMAC-SHA256(HMAC-SHA256(secret, label), \"kilroy-run-page:\" + id)[:16])", tok, want)
	}
	if tok == old.Token(runID) || tok == current.Token(otherRunID) {
		t.Errorf("Token does not depend on the secret and the run id")
	}
	flipped := []byte(tok)
	flipped[3] ^= 1
	tests := []struct {
		name, id, token string
		want            bool
	}{
		{"its own token", runID, tok, true},
		{"made with the old secret", runID, old.Token(runID), true},
		{"missing", runID, "", false},
		{"another run's", runID, current.Token(otherRunID), false},
		{"another server's", runID, stranger.Token(runID), false},
		{"one bit off", runID, string(flipped), false},
		{"cut short", runID, tok[:21], false},
		{"longer", runID, tok + "A", false},
		{"padded", runID, tok + "==", false},
		{"not base64url", runID, strings.Repeat("*", 22), false},
		{"the webhook secret itself", runID, "new-webhook-secret", false},
	}
	for _, tt := range tests {
		if got := current.Valid(tt.id, tt.token); got != tt.want {
			t.Errorf("%s: Valid(%s, %q) = %v, want %v", tt.name, tt.id, tt.token, got, tt.want)
		}
	}
	if old.Valid(runID, tok) {
		t.Errorf("a server holding only the old secret accepts a token of the new one")
	}
	if got, want := current.Path(runID), "/runs/"+runID+"?t="+tok; got != want {
		t.Errorf("Path = %q, want %q", got, want)
	}
}

func TestNewKeysRefusesNoSecret(t *testing.T) {
	if _, err := runpage.NewKeys(); err == nil {
		t.Errorf("NewKeys() without a secret succeeded")
	}
	if _, err := runpage.NewKeys([]byte("s"), nil); err == nil {
		t.Errorf("NewKeys with an empty secret succeeded")
	}
	if _, err := runpage.New(runpage.Options{RunsDir: t.TempDir()}); err == nil {
		t.Errorf("New without Keys succeeded: pages would open without tokens")
	}
}

// TestOpen: the page opens with its token only, made with either secret;
// without it every run, existing or not and well-formed or not, fails the
// same way before its directory is looked at.
func TestOpen(t *testing.T) {
	runsDir, f := newRun(t)
	writeFullRun(f)
	keys := newKeys(t, "new-webhook-secret", "old-webhook-secret")
	p := newPages(t, runsDir, runpage.Options{Keys: keys})
	old := newKeys(t, "old-webhook-secret")

	for _, token := range []string{keys.Token(runID), old.Token(runID)} {
		run, err := p.Open(runID, token)
		if err != nil || run.ID != runID || len(run.Nodes) == 0 {
			t.Errorf("Open(%s, valid token) = %+v, %v; want the run", runID, run, err)
		}
	}
	tests := []struct{ name, id, token string }{
		{"no token", runID, ""},
		{"wrong token", runID, "AAAAAAAAAAAAAAAAAAAAAA"},
		{"another run's token", runID, keys.Token(otherRunID)},
		{"no such run, no token", otherRunID, ""},
		{"invalid id, no token", "../etc", ""},
	}
	for _, tt := range tests {
		if run, err := p.Open(tt.id, tt.token); !errors.Is(err, runpage.ErrNoAccess) || run != nil {
			t.Errorf("%s: Open(%q, %q) = %v, %v; want ErrNoAccess", tt.name, tt.id, tt.token, run, err)
		}
	}
	if _, err := p.Open(otherRunID, keys.Token(otherRunID)); !errors.Is(err, runpage.ErrNotFound) {
		t.Errorf("Open of a run that does not exist, with its token = %v, want ErrNotFound", err)
	}
}
