package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
)

// Signature headers GitHub sends. Only the SHA-256 one is accepted.
const (
	headerSignature256 = "X-Hub-Signature-256"
	headerSignature1   = "X-Hub-Signature"
	signaturePrefix    = "sha256="
)

// signatureHeader returns the SHA-256 signature header or a 401 that says
// which header is required.
func signatureHeader(h http.Header) (string, error) {
	sig := h.Get(headerSignature256)
	switch {
	case sig != "":
		return sig, nil
	case h.Get(headerSignature1) != "":
		return "", unauthorized("X-Hub-Signature (HMAC-SHA1) is not accepted: X-Hub-Signature-256 is required")
	default:
		return "", unauthorized("missing X-Hub-Signature-256 header: deliveries must be signed with the webhook secret")
	}
}

// verifySignature checks header, "sha256=" and the hex HMAC-SHA256 of body,
// against every secret. It compares in constant time and tries all secrets
// whatever matched, so timing tells nothing about which one did.
func verifySignature(secrets [][]byte, header string, body []byte) error {
	hexSum, ok := strings.CutPrefix(header, signaturePrefix)
	if !ok {
		return unauthorized("X-Hub-Signature-256 must start with " + signaturePrefix)
	}
	got, err := hex.DecodeString(hexSum)
	if err != nil || len(got) != sha256.Size {
		return unauthorized("X-Hub-Signature-256 is not a hex SHA-256 digest")
	}
	match := false
	for _, secret := range secrets {
		if hmac.Equal(got, sign(secret, body)) {
			match = true
		}
	}
	if !match {
		return unauthorized("X-Hub-Signature-256 does not match the body: check the webhook secret")
	}
	return nil
}

// sign returns the HMAC-SHA256 of body under secret.
func sign(secret, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return m.Sum(nil)
}
