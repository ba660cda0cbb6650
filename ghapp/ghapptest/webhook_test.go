package ghapptest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
)

// TestSignatureKnownAnswer is GitHub's documented example ("Validating
// webhook deliveries"), quoted in the shared testdata README.
func TestSignatureKnownAnswer(t *testing.T) {
	got := ghapptest.Signature256([]byte("It's a Secret to Everybody"), []byte("Hello, World!"))
	const want = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
	if got != want {
		t.Errorf("Signature256 = %s, want %s", got, want)
	}
}

func TestSignedRequest(t *testing.T) {
	s := ghapptest.New(t)
	secret := []byte("s3cret")
	body := ghapptest.LoadPayload(t, "pull_request/opened.payload.json")
	var payload struct{ Action string }
	if err := json.Unmarshal(body, &payload); err != nil || payload.Action != "opened" {
		t.Fatalf("payload action %q, %v", payload.Action, err)
	}

	hook := s.Hook(secret)
	hook.SHA1 = true
	req := hook.Request(t, "http://bot.invalid/webhooks/github", "pull_request", "d-1", body)
	want := map[string]string{
		"Content-Type":                           "application/json",
		"X-GitHub-Event":                         "pull_request",
		"X-GitHub-Delivery":                      "d-1",
		"X-GitHub-Hook-ID":                       "1",
		"X-GitHub-Hook-Installation-Target-Type": "integration",
		"X-Hub-Signature-256":                    ghapptest.Signature256(secret, body),
		"X-Hub-Signature":                        ghapptest.Signature1(secret, body),
	}
	for k, v := range want {
		if got := req.Header.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if ua := req.Header.Get("User-Agent"); !bytes.HasPrefix([]byte(ua), []byte("GitHub-Hookshot/")) {
		t.Errorf("User-Agent = %q", ua)
	}
	sent, err := io.ReadAll(req.Body)
	if err != nil || !bytes.Equal(sent, body) {
		t.Errorf("body differs from the payload's bytes (err %v)", err)
	}

	plain := ghapptest.SignedRequest(t, "http://bot.invalid/", secret, "ping", "d-2", []byte("{}"))
	if plain.Header.Get("X-Hub-Signature") != "" || plain.Header.Get("X-Hub-Signature-256") == "" {
		t.Errorf("SignedRequest headers %v, want SHA-256 only", plain.Header)
	}
}
