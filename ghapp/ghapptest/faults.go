package ghapptest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"strconv"
	"strings"
)

// Fault makes matching requests fail before the fake handles them, as
// GitHub's front end does under load.
type Fault struct {
	Method string // "" matches any method
	// Path is a path.Match pattern for the full URL path, REST paths
	// included with their "/api/v3" prefix:
	// "/api/v3/repos/acme/widgets/check-runs/*".
	Path   string
	Times  int // how many requests fail; then the fault is spent
	Status int
	Header map[string]string
	// Body is the response body; empty chooses GitHub's for Status and
	// Header (see FailNext).
	Body string
}

// FailNext makes the next n requests matching method and pathPattern (see
// Fault.Path) fail with status and headers. The body is what GitHub sends:
// a 403 or 429 with "x-ratelimit-remaining: 0" is the primary rate limit,
// any other 403 or 429 a secondary rate limit (set "Retry-After" for the
// wait), anything else a plain error message. For example
//
//	s.FailNext("POST", "/api/v3/repos/*/*/check-runs", 2, 502, nil)
//	s.FailNext("PATCH", "/api/v3/repos/*/*/check-runs/*", 1, 403, map[string]string{"Retry-After": "1"})
func (s *Server) FailNext(method, pathPattern string, n, status int, headers map[string]string) {
	s.t.Helper()
	s.Inject(Fault{Method: method, Path: pathPattern, Times: n, Status: status, Header: headers})
}

// Inject adds a fault. Faults apply in the order they were added.
func (s *Server) Inject(f Fault) {
	s.t.Helper()
	if _, err := path.Match(f.Path, ""); err != nil {
		s.t.Fatalf("ghapptest: fault path %q: %v", f.Path, err)
	}
	if f.Times <= 0 || f.Status < 400 {
		s.t.Fatalf("ghapptest: fault %+v must fail at least once with a 4xx or 5xx status", f)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.faults = append(s.st.faults, &f)
}

// takeFault spends one failure of the first fault matching r.
func (s *Server) takeFault(r *http.Request) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.st.faults {
		if f.Method != "" && !strings.EqualFold(f.Method, r.Method) {
			continue
		}
		if ok, _ := path.Match(f.Path, r.URL.Path); !ok {
			continue
		}
		f.Times--
		if f.Times == 0 {
			s.st.faults = append(s.st.faults[:i:i], s.st.faults[i+1:]...)
		}
		return f
	}
	return nil
}

func (s *Server) writeFault(w http.ResponseWriter, f *Fault) {
	for k, v := range f.Header {
		w.Header().Set(k, v)
	}
	body := f.Body
	if body == "" {
		body = faultBody(f, w.Header())
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(f.Status)
	fmt.Fprint(w, body)
}

// faultBody is GitHub's body for an injected failure. go-github and other
// clients tell the rate limits apart by these messages and links.
func faultBody(f *Fault, h http.Header) string {
	msg, doc := http.StatusText(f.Status), docsURL
	limited := f.Status == http.StatusForbidden || f.Status == http.StatusTooManyRequests
	switch {
	case limited && h.Get("X-Ratelimit-Remaining") == "0":
		msg = "API rate limit exceeded for installation."
		doc = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"
	case limited:
		msg = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
		doc = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"
	case f.Status >= 500:
		msg = "Server Error"
	}
	b, _ := json.Marshal(map[string]string{ // strings always marshal
		"message": msg, "documentation_url": doc, "status": strconv.Itoa(f.Status),
	})
	return string(b)
}
