package ghapptest

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/cgi"
	"strings"
)

// newGitBackend serves git smart HTTP through `git http-backend`, behind the
// same token checks as REST. The backend's configuration comes only from
// the environment: receive-pack on (GitHub accepts pushes), refs/pull/*
// hidden from pushes as on GitHub, reachable SHAs fetchable by id.
func (s *Server) newGitBackend() http.Handler {
	logger := log.New(testWriter{s}, "git http-backend: ", 0)
	backend := &cgi.Handler{
		Path: s.git.bin,
		Args: []string{"http-backend"},
		Env: s.git.env(
			"GIT_PROJECT_ROOT="+s.gitRoot,
			"GIT_HTTP_EXPORT_ALL=1",
			"REMOTE_USER=x-access-token",
			"GIT_CONFIG_COUNT=3",
			"GIT_CONFIG_KEY_0=http.receivepack", "GIT_CONFIG_VALUE_0=true",
			"GIT_CONFIG_KEY_1=receive.hideRefs", "GIT_CONFIG_VALUE_1=refs/pull",
			"GIT_CONFIG_KEY_2=uploadpack.allowReachableSHA1InWant", "GIT_CONFIG_VALUE_2=true",
		),
		Logger: logger,
		Stderr: testWriter{s},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.authorizeGit(r); err != nil {
			writeGitError(w, err)
			return
		}
		if err := bufferBody(r); err != nil {
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			return
		}
		// The backend needs no credentials; keep the token out of its
		// environment.
		r.Header.Del("Authorization")
		backend.ServeHTTP(w, r)
	})
}

// authorizeGit checks HTTP basic auth "x-access-token:<token>" for the
// repository and the access the request needs: write to push, read else.
func (s *Server) authorizeGit(r *http.Request) error {
	name, ok := strings.CutSuffix(r.PathValue("repo"), ".git")
	if !ok {
		return errNotFound()
	}
	user, pass, ok := r.BasicAuth()
	if !ok || user != "x-access-token" {
		return errBadCredentials()
	}
	level := "read"
	if strings.HasSuffix(r.URL.Path, "/git-receive-pack") || r.URL.Query().Get("service") == "git-receive-pack" {
		level = "write"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ts, err := s.liveTokenLocked(pass)
	if err != nil {
		return err
	}
	rs := s.st.repos[repoKey(r.PathValue("owner"), name)]
	if rs == nil || !ts.covers(rs) {
		return errNotFound()
	}
	if !ts.allows(level, "contents") {
		return errNotAccessible()
	}
	return nil
}

// writeGitError answers as GitHub's git front end does: plain text, and a
// Basic challenge on 401 so git knows to ask for (or give up on)
// credentials.
func writeGitError(w http.ResponseWriter, err error) {
	switch e, _ := err.(*apiError); {
	case e != nil && e.status == http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", `Basic realm="GitHub"`)
		http.Error(w, "Invalid username or token. Password authentication is not supported for Git operations.", e.status)
	case e != nil && e.status == http.StatusForbidden:
		http.Error(w, "Write access to repository not granted.", e.status)
	default:
		http.Error(w, "Repository not found.", http.StatusNotFound)
	}
}

// bufferBody reads a chunked body into memory: net/http/cgi refuses
// chunked requests, and git sends pushes larger than http.postBuffer
// chunked.
func bufferBody(r *http.Request) error {
	if len(r.TransferEncoding) == 0 {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return fmt.Errorf("read git request body: %w", err)
	}
	if len(b) > maxBody {
		return fmt.Errorf("git request body over %d bytes", maxBody)
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.ContentLength = int64(len(b))
	r.TransferEncoding = nil
	return nil
}

// testWriter sends the backend's complaints to the test log.
type testWriter struct{ s *Server }

func (w testWriter) Write(p []byte) (int, error) {
	w.s.t.Logf("ghapptest: %s", bytes.TrimRight(p, "\n"))
	return len(p), nil
}
