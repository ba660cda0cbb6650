package ghapptest

import (
	"net/http"
	"slices"
)

// listInstallations serves GET /app/installations (App JWT): every
// installation, oldest first, paginated as GitHub does.
func (s *Server) listInstallations(w http.ResponseWriter, r *http.Request) error {
	if err := s.requireJWT(r); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]int64, 0, len(s.st.installations))
	for id := range s.st.installations {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	out := make([]map[string]any, 0, len(ids))
	for _, id := range paginate(w, r, s.URL(), ids) {
		out = append(out, s.installationJSON(s.st.installations[id]))
	}
	return writeJSON(w, http.StatusOK, out)
}
