package ghapptest

import (
	"net/http"
	"strings"
)

// roles maps a repository role to the permission the API reports for it:
// GitHub folds maintain into write and triage into read, and a bot that
// reads role_name instead of permission gets it wrong.
var roles = map[string]string{
	"admin": "admin", "maintain": "write", "write": "write",
	"triage": "read", "read": "read", "none": "none",
}

// SetPermission gives user a role on owner/repo: admin, maintain, write,
// triage, read or none. Users never set have none.
func (s *Server) SetPermission(owner, repo, user, role string) {
	s.t.Helper()
	if _, ok := roles[role]; !ok {
		s.t.Fatalf("ghapptest: SetPermission: unknown role %q", role)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mustRepoLocked(owner, repo).perms[strings.ToLower(user)] = role
}

// getPermission serves GET /repos/{owner}/{repo}/collaborators/{user}/permission.
func (s *Server) getPermission(w http.ResponseWriter, r *http.Request) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs, err := s.authorizeLocked(r, "read", "metadata")
	if err != nil {
		return err
	}
	user := r.PathValue("user")
	role, ok := rs.perms[strings.ToLower(user)]
	if !ok {
		role = "none"
	}
	return writeJSON(w, http.StatusOK, map[string]any{
		"permission": roles[role],
		"role_name":  role,
		"user":       userJSON(user, "User"),
	})
}
