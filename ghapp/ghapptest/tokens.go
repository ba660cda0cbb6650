package ghapptest

import (
	"cmp"
	"crypto/rand"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// tokenLifetime is how long GitHub's installation tokens live.
const tokenLifetime = time.Hour

// tokenState is an issued installation token; guarded by Server.mu.
type tokenState struct {
	seq          int64 // issue order
	value        string
	installation int64
	repos        map[int64]bool // nil: every repository of the installation
	perms        map[string]string
	expires      time.Time
	revoked      bool
}

// Token describes an issued installation token for assertions (scoped to
// one repository? revoked at the end of the run?). Its String hides the value.
type Token struct {
	Installation int64
	Repositories []string // full names; nil when the token covers all
	Permissions  map[string]string
	ExpiresAt    time.Time
	Revoked      bool
	value        string
	seq          int64
}

// Value is the token itself, for tests that check it never leaks.
func (t Token) Value() string { return t.value }

// String describes the token without its value, so failure messages that
// print it leak nothing.
func (t Token) String() string {
	return fmt.Sprintf("token(installation %d, repos %v, revoked %v)", t.Installation, t.Repositories, t.Revoked)
}

// Tokens lists the issued installation tokens, oldest first.
func (s *Server) Tokens() []Token {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Token
	for _, ts := range s.st.tokens {
		out = append(out, s.tokenLocked(ts))
	}
	slices.SortFunc(out, func(a, b Token) int { return cmp.Compare(a.seq, b.seq) })
	return out
}

// ExpireTokens makes every issued token expired, as an hour passing would,
// so a test can check that the bot fetches a fresh one.
func (s *Server) ExpireTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ts := range s.st.tokens {
		ts.expires = time.Now().Add(-time.Second)
	}
}

func (s *Server) tokenLocked(ts *tokenState) Token {
	t := Token{Installation: ts.installation, Permissions: maps.Clone(ts.perms),
		ExpiresAt: ts.expires, Revoked: ts.revoked, value: ts.value, seq: ts.seq}
	if ts.repos != nil {
		for _, rs := range s.st.repos {
			if ts.repos[rs.id] {
				t.Repositories = append(t.Repositories, rs.fullName())
			}
		}
		slices.Sort(t.Repositories)
	}
	return t
}

// tokenRequest is the body of POST /app/installations/{id}/access_tokens.
type tokenRequest struct {
	Repositories  []string          `json:"repositories"`
	RepositoryIDs []int64           `json:"repository_ids"`
	Permissions   map[string]string `json:"permissions"`
}

// createToken serves POST /app/installations/{id}/access_tokens (App JWT).
func (s *Server) createToken(w http.ResponseWriter, r *http.Request) error {
	if err := s.requireJWT(r); err != nil {
		return err
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return errNotFound()
	}
	var req tokenRequest
	if r.ContentLength != 0 {
		if err := decodeBody(r, &req); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.st.installations[id]; !ok {
		return errNotFound()
	}
	ts, err := s.issueTokenLocked(id, req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, s.tokenJSONLocked(ts))
}

func (s *Server) issueTokenLocked(inst int64, req tokenRequest) (*tokenState, error) {
	repos, err := s.tokenReposLocked(inst, req)
	if err != nil {
		return nil, err
	}
	perms, err := s.tokenPerms(req.Permissions)
	if err != nil {
		return nil, err
	}
	ts := &tokenState{seq: s.nextIDLocked(), value: newTokenValue(), installation: inst, repos: repos,
		perms: perms, expires: time.Now().Add(tokenLifetime).UTC().Truncate(time.Second)}
	s.st.tokens[ts.value] = ts
	return ts, nil
}

// tokenReposLocked resolves the requested repositories; nil means all.
func (s *Server) tokenReposLocked(inst int64, req tokenRequest) (map[int64]bool, error) {
	if len(req.Repositories) == 0 && len(req.RepositoryIDs) == 0 {
		return nil, nil
	}
	const msg = "There is at least one repository that does not exist or is not accessible to the parent installation."
	repos := map[int64]bool{}
	for _, name := range req.Repositories {
		rs := s.repoByNameLocked(inst, name)
		if rs == nil {
			return nil, errInvalid(msg)
		}
		repos[rs.id] = true
	}
	for _, id := range req.RepositoryIDs {
		rs := s.repoByIDLocked(id)
		if rs == nil || rs.installation != inst {
			return nil, errInvalid(msg)
		}
		repos[id] = true
	}
	return repos, nil
}

// tokenPerms narrows the installation's permissions; asking for more than
// it grants is refused, as on GitHub. Metadata read comes with every token.
func (s *Server) tokenPerms(want map[string]string) (map[string]string, error) {
	if len(want) == 0 {
		return maps.Clone(s.cfg.perms), nil
	}
	got := map[string]string{}
	if s.cfg.perms["metadata"] != "" {
		got["metadata"] = "read"
	}
	for name, level := range want {
		if permRank(level) == 0 || permRank(level) > permRank(s.cfg.perms[name]) {
			return nil, errInvalid("The permissions requested are not granted to this installation.")
		}
		got[name] = level
	}
	return got, nil
}

func (s *Server) tokenJSONLocked(ts *tokenState) map[string]any {
	out := map[string]any{
		"token":                ts.value,
		"expires_at":           ts.expires.Format(time.RFC3339),
		"permissions":          ts.perms,
		"repository_selection": "all",
	}
	if ts.repos != nil {
		var repos []map[string]any
		for _, rs := range s.sortedReposLocked() {
			if ts.repos[rs.id] {
				repos = append(repos, s.repoJSON(rs))
			}
		}
		out["repository_selection"] = "selected"
		out["repositories"] = repos
	}
	return out
}

// revokeToken serves DELETE /installation/token: the caller's token stops
// working.
func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts, err := s.tokenFromRequestLocked(r)
	if err != nil {
		return err
	}
	ts.revoked = true
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// tokenFromRequestLocked finds the live installation token the request
// carries as "token X" or "Bearer X".
func (s *Server) tokenFromRequestLocked(r *http.Request) (*tokenState, error) {
	scheme, cred, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "token") && !strings.EqualFold(scheme, "Bearer") {
		return nil, errBadCredentials()
	}
	return s.liveTokenLocked(strings.TrimSpace(cred))
}

func (s *Server) liveTokenLocked(value string) (*tokenState, error) {
	ts, ok := s.st.tokens[value]
	if !ok || ts.revoked || !time.Now().Before(ts.expires) {
		return nil, errBadCredentials()
	}
	if _, ok := s.st.installations[ts.installation]; !ok {
		return nil, errBadCredentials()
	}
	return ts, nil
}

// permRank orders permission levels; 0 is none.
func permRank(level string) int {
	switch level {
	case "read":
		return 1
	case "write":
		return 2
	case "admin":
		return 3
	}
	return 0
}

// allows reports whether the token grants level on any of names (some
// endpoints accept either issues or pull_requests).
func (ts *tokenState) allows(level string, names ...string) bool {
	for _, n := range names {
		if permRank(ts.perms[n]) >= permRank(level) {
			return true
		}
	}
	return false
}

// newTokenValue makes a "ghs_" token of GitHub's classic length.
func newTokenValue() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 36)
	rand.Read(b) // never fails: see crypto/rand.Read
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return "ghs_" + string(b)
}
