package runpage

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/url"
)

// Keys sign and check the tokens of run page links. A run page shows the
// logs of a private repository, and run ids are ULIDs, ordered by time and
// so guessable: the page opens only with a token bound to its run,
// base64url(HMAC-SHA256(key, "kilroy-run-page:" + id)) cut to 128 bits,
// which only the server can make. The link is the capability; there is
// nothing to revoke one by one.
//
// Each key is derived from a webhook secret the server already holds, so
// there is no new setting, and rotating the secret ends every link made
// with the old one. The first secret signs; every secret verifies, so
// links made before a rotation keep working while the old secret is still
// configured next to the new one. Make Keys with NewKeys.
type Keys struct {
	keys [][]byte
}

// keyLabel and tokenLabel separate these MACs from the webhook's own
// signatures over the same secret and from any other use of the key.
const (
	keyLabel   = "kilroy run page key"
	tokenLabel = "kilroy-run-page:"
	tokenBytes = 16
)

// TokenParam is the query parameter carrying the token: /runs/{id}?t=….
const TokenParam = "t"

// NewKeys derives the page keys from the webhook secrets, current first.
func NewKeys(secrets ...[]byte) (*Keys, error) {
	if len(secrets) == 0 {
		return nil, errors.New("runpage: no secret for page tokens")
	}
	k := &Keys{}
	for _, s := range secrets {
		if len(s) == 0 {
			return nil, errors.New("runpage: empty secret for page tokens")
		}
		k.keys = append(k.keys, mac(s, keyLabel))
	}
	return k, nil
}

// Token is the token of run id's page, made with the current key.
func (k *Keys) Token(id string) string {
	return base64.RawURLEncoding.EncodeToString(mac(k.keys[0], tokenLabel+id)[:tokenBytes])
}

// Valid reports whether token opens run id's page under any key. It
// compares in constant time and tries every key whatever the outcome, so
// the time taken says nothing about how close a guess was.
func (k *Keys) Valid(id, token string) bool {
	got, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(got) != tokenBytes {
		return false // the length is no secret
	}
	ok := 0
	for _, key := range k.keys {
		ok |= subtle.ConstantTimeCompare(got, mac(key, tokenLabel+id)[:tokenBytes])
	}
	return ok == 1
}

// Path is the path and query of run id's page with its token:
// /runs/<id>?t=<token>.
func (k *Keys) Path(id string) string {
	return "/runs/" + url.PathEscape(id) + "?" + TokenParam + "=" + k.Token(id)
}

func mac(key []byte, msg string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msg))
	return h.Sum(nil)
}
