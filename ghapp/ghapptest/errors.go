package ghapptest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
)

const docsURL = "https://docs.github.com/rest"

// apiError is a refusal the fake answers in GitHub's JSON error shape.
type apiError struct {
	status  int
	message string
	header  map[string]string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s", e.status, e.message) }

func errNotFound() error { return &apiError{status: http.StatusNotFound, message: "Not Found"} }

func errBadCredentials() error {
	return &apiError{status: http.StatusUnauthorized, message: "Bad credentials"}
}

// errNotAccessible is GitHub's answer when a token lacks a permission.
func errNotAccessible() error {
	return &apiError{status: http.StatusForbidden, message: "Resource not accessible by integration"}
}

func errInvalid(msg string) error {
	return &apiError{status: http.StatusUnprocessableEntity, message: msg}
}

func errBadJSON() error {
	return &apiError{status: http.StatusBadRequest, message: "Problems parsing JSON"}
}

// apiHandler is a REST handler; api adapts it, answering its error.
type apiHandler func(w http.ResponseWriter, r *http.Request) error

// api turns a handler's error into GitHub's error response, in one place. An
// error that is not an apiError is a bug in the fake and fails the test.
func (s *Server) api(h apiHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := h(w, r)
		if err == nil {
			return
		}
		var ae *apiError
		if !errors.As(err, &ae) {
			s.t.Errorf("ghapptest: %s %s: internal error: %v", r.Method, r.URL.Path, err)
			ae = &apiError{status: http.StatusInternalServerError, message: "Server Error"}
		}
		writeError(w, ae)
	})
}

func writeError(w http.ResponseWriter, e *apiError) {
	for k, v := range e.header {
		w.Header().Set(k, v)
	}
	writeBody(w, e.status, map[string]string{
		"message":           e.message,
		"documentation_url": docsURL,
		"status":            strconv.Itoa(e.status),
	})
}

// writeJSON answers v; it returns nil so handlers can end with it.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	writeBody(w, status, v)
	return nil
}

func writeBody(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// Only the fake's own values are marshalled; this cannot happen.
		panic(fmt.Sprintf("ghapptest: marshal response: %v", err))
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b)
}

// decodeBody decodes a JSON request body into v.
func decodeBody(r *http.Request, v any) error {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		return errBadJSON()
	}
	return nil
}
