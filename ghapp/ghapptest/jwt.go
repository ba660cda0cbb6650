package ghapptest

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxJWTLifetime is GitHub's limit on how far in the future an App JWT may
// expire.
const maxJWTLifetime = 10 * time.Minute

// iatLeeway is how far in the future "iat" may lie: GitHub tolerates clock
// drift and recommends back-dating iat by 60 seconds.
const iatLeeway = 60 * time.Second

// requireJWT refuses a request not signed as the App.
func (s *Server) requireJWT(r *http.Request) error {
	scheme, cred, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "Bearer") || strings.Count(cred, ".") != 2 {
		// GitHub's words when an installation token or nothing is sent to an
		// App-only endpoint.
		return &apiError{status: http.StatusUnauthorized,
			message: "A JSON web token could not be decoded"}
	}
	return verifyAppJWT(cred, &s.key.PublicKey, s.cfg.appID, s.cfg.clientID, time.Now())
}

type jwtClaims struct {
	Iss json.RawMessage `json:"iss"`
	Exp *json.Number    `json:"exp"`
	Iat *json.Number    `json:"iat"`
}

// verifyAppJWT checks an App JWT as GitHub does: RS256 by the App's key,
// "iss" the App id (number or string) or client id, "exp" in the future
// but at most ten minutes away, "iat" not in the future.
func verifyAppJWT(tok string, key *rsa.PublicKey, appID int64, clientID string, now time.Time) error {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return jwtError("A JSON web token could not be decoded")
	}
	var hdr struct{ Alg string }
	if err := decodeSegment(parts[0], &hdr); err != nil || hdr.Alg != "RS256" {
		return jwtError("A JSON web token could not be decoded")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return jwtError("A JSON web token could not be decoded")
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(key, crypto.SHA256, sum[:], sig) != nil {
		return jwtError("A JSON web token could not be decoded")
	}
	var c jwtClaims
	if err := decodeSegment(parts[1], &c); err != nil {
		return jwtError("A JSON web token could not be decoded")
	}
	if !issuerMatches(c.Iss, appID, clientID) {
		return jwtError("'Issuer' claim ('iss') must be an Integer or the App's client ID")
	}
	return checkJWTTimes(c, now)
}

func checkJWTTimes(c jwtClaims, now time.Time) error {
	exp, ok := numericDate(c.Exp)
	if !ok || !exp.After(now) {
		return jwtError("'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires")
	}
	if exp.Sub(now) > maxJWTLifetime {
		return jwtError("'Expiration time' claim ('exp') is too far in the future")
	}
	if iat, ok := numericDate(c.Iat); c.Iat != nil && (!ok || iat.Sub(now) > iatLeeway) {
		return jwtError("'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued")
	}
	return nil
}

func jwtError(msg string) error { return &apiError{status: http.StatusUnauthorized, message: msg} }

func decodeSegment(seg string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}

// issuerMatches accepts the App id as a JSON number or string (libraries
// differ: ghinstallation sends a string) or the client id.
func issuerMatches(raw json.RawMessage, appID int64, clientID string) bool {
	var n json.Number
	if json.Unmarshal(raw, &n) == nil && n.String() == strconv.FormatInt(appID, 10) {
		return true
	}
	var str string
	if json.Unmarshal(raw, &str) != nil {
		return false
	}
	return str == strconv.FormatInt(appID, 10) || str == clientID
}

func numericDate(n *json.Number) (time.Time, bool) {
	if n == nil {
		return time.Time{}, false
	}
	f, err := n.Float64()
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(int64(f), 0), true
}
