package ghapptest

import (
	"net/http"
	"slices"
	"time"
)

// Request is one request the fake answered.
type Request struct {
	Method string
	Path   string // full URL path, "/api/v3/…" for REST
	Query  string
	Status int
	Body   string    // REST request body; empty for git, whose bodies are packs
	At     time.Time // when the fake received it
}

// Requests returns every request answered so far, in order of completion.
// Nothing from the Authorization header is kept, so printing these never
// leaks a token.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.st.requests)
}

func (s *Server) logRequest(r *http.Request, body []byte, status int, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.requests = append(s.st.requests, Request{
		Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Status: status, Body: string(body), At: at,
	})
}
