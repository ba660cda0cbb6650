package metrics

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// knownEvents are the X-GitHub-Event values counted by name. The header is
// read before the signature is checked, so its value is not trusted.
var knownEvents = map[string]bool{
	"pull_request": true, "issue_comment": true, "check_run": true, "check_suite": true,
	"installation": true, "installation_repositories": true, "ping": true,
	"other": true,
}

// knownResults are the delivery results counted by name.
var knownResults = map[string]bool{
	"queued": true, "duplicate": true, "ignored": true, "ok": true,
	"malformed": true, "unauthorized": true, "too_large": true,
	"unavailable": true, "error": true, "other": true,
}

// sniffBytes is how much of an answer Deliveries keeps to read its result:
// the webhook's answers are a short JSON object.
const sniffBytes = 512

// Deliveries wraps the webhook handler and counts every delivery by event
// and result. The result is the "status" the webhook put in its JSON answer
// (queued, duplicate, ignored) when it said one, else it follows from the
// status code (401 unauthorized, 400 malformed, 413 too_large, 503
// unavailable, other 5xx error).
func (m *Metrics) Deliveries(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &recorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		m.Delivery(r.Header.Get("X-GitHub-Event"), result(rec.code(), rec.head))
	})
}

func result(code int, body []byte) string {
	var reply struct {
		Status string `json:"status"`
	}
	if json.Unmarshal(body, &reply) == nil {
		switch reply.Status {
		case "queued", "duplicate", "ignored":
			return reply.Status
		}
	}
	switch {
	case code == http.StatusAccepted:
		return "queued"
	case code == http.StatusOK:
		return "ok"
	case code == http.StatusUnauthorized:
		return "unauthorized"
	case code == http.StatusBadRequest:
		return "malformed"
	case code == http.StatusRequestEntityTooLarge:
		return "too_large"
	case code == http.StatusServiceUnavailable:
		return "unavailable"
	case code >= 500:
		return "error"
	}
	return "other"
}

// recorder remembers the status code and the start of the body.
type recorder struct {
	http.ResponseWriter
	status int
	head   []byte
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if room := sniffBytes - len(r.head); room > 0 {
		r.head = append(r.head, b[:min(room, len(b))]...)
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the real writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (r *recorder) code() int {
	if r.status == 0 {
		return http.StatusOK
	}
	return r.status
}

// statusLabel is a status code as a label value.
func statusLabel(code int) string { return strconv.Itoa(code) }
