package webhook

import (
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
)

// TestSignatureKnownAnswer is GitHub's documented vector ("Validating webhook
// deliveries").
func TestSignatureKnownAnswer(t *testing.T) {
	secret, body := []byte("It's a Secret to Everybody"), []byte("Hello, World!")
	const want = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
	if got := signaturePrefix + hex.EncodeToString(sign(secret, body)); got != want {
		t.Errorf("sign = %s, want %s", got, want)
	}
	if err := verifySignature([][]byte{[]byte("other"), secret}, want, body); err != nil {
		t.Errorf("verifySignature(known answer) = %v, want nil", err)
	}
}

func TestVerifySignature(t *testing.T) {
	body := []byte(`{"zen":"x"}`)
	good := sig256(testSecret, body)
	tests := []struct {
		name   string
		header string
		ok     bool
	}{
		{"good", good, true},
		{"upper-case hex", "sha256=" + strings.ToUpper(strings.TrimPrefix(good, "sha256=")), true},
		{"other secret", sig256([]byte("other"), body), false},
		{"sha1 prefix", "sha1=" + strings.TrimPrefix(good, "sha256="), false},
		{"no prefix", strings.TrimPrefix(good, "sha256="), false},
		{"truncated", good[:len(good)-2], false},
		{"not hex", "sha256=" + strings.Repeat("zz", 32), false},
		{"empty digest", "sha256=", false},
	}
	for _, tt := range tests {
		err := verifySignature([][]byte{testSecret}, tt.header, body)
		if (err == nil) != tt.ok {
			t.Errorf("%s: verifySignature = %v, want ok %v", tt.name, err, tt.ok)
		}
		if code, _ := statusOf(err); err != nil && code != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", tt.name, code)
		}
	}
}
