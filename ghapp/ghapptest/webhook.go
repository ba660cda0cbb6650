package ghapptest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"testing"
)

// Hook signs webhook deliveries exactly as GitHub does for an App's hook.
type Hook struct {
	Secret []byte
	ID     int64 // X-GitHub-Hook-ID; default 1
	AppID  int64 // X-GitHub-Hook-Installation-Target-ID when set
	// SHA1 adds the legacy X-Hub-Signature (HMAC-SHA1), which GitHub still
	// sends beside X-Hub-Signature-256.
	SHA1 bool
}

// Hook returns a Hook for this server's App.
func (s *Server) Hook(secret []byte) Hook {
	return Hook{Secret: secret, ID: 1, AppID: s.cfg.appID}
}

// SignedRequest is a POST of body to url as a GitHub delivery of event,
// signed with secret (X-Hub-Signature-256 only).
func SignedRequest(t testing.TB, url string, secret []byte, event, deliveryID string, body []byte) *http.Request {
	t.Helper()
	return Hook{Secret: secret}.Request(t, url, event, deliveryID, body)
}

// Request is a POST of body to url as a GitHub delivery of event. Body is
// sent and signed byte for byte; tests remove or spoil headers afterwards
// to check refusals.
func (h Hook) Request(t testing.TB, url, event, deliveryID string, body []byte) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatalf("ghapptest: webhook request: %v", err)
	}
	hookID := h.ID
	if hookID == 0 {
		hookID = 1
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "GitHub-Hookshot/a1b2c3d")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", deliveryID)
	req.Header.Set("X-GitHub-Hook-ID", strconv.FormatInt(hookID, 10))
	if h.AppID != 0 {
		req.Header.Set("X-GitHub-Hook-Installation-Target-Type", "integration")
		req.Header.Set("X-GitHub-Hook-Installation-Target-ID", strconv.FormatInt(h.AppID, 10))
	}
	req.Header.Set("X-Hub-Signature-256", Signature256(h.Secret, body))
	if h.SHA1 {
		req.Header.Set("X-Hub-Signature", Signature1(h.Secret, body))
	}
	return req
}

// Signature256 is GitHub's X-Hub-Signature-256 value for body:
// "sha256=" + hex HMAC-SHA256 over the exact bytes.
func Signature256(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Signature1 is the legacy X-Hub-Signature value: "sha1=" + hex HMAC-SHA1.
func Signature1(secret, body []byte) string {
	m := hmac.New(sha1.New, secret)
	m.Write(body)
	return "sha1=" + hex.EncodeToString(m.Sum(nil))
}
