package webhook

import (
	"bytes"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"sync"
)

// Media types a delivery may use. GitHub sends the JSON payload as the body
// (application/json) or, for hooks configured that way, as the form field
// "payload" (application/x-www-form-urlencoded); the signature covers the
// body as sent in both cases.
const (
	mediaJSON = "application/json"
	mediaForm = "application/x-www-form-urlencoded"
)

// bodies recycles body buffers: a pull_request payload is some 28 KB, and
// allocating one per delivery made the garbage collector a noticeable part
// of a delivery's cost. Nothing decoded from a body refers to its bytes
// (decoded strings are copies), so a buffer is reused once its delivery
// is answered.
var bodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBody is the largest buffer kept for reuse; a rare huge delivery
// must not pin its memory.
const maxPooledBody = 1 << 20

// readBody reads the whole body, at most limit bytes, into a pooled buffer
// that release gives back (call it once the body is no longer used; it is
// never nil). A declared length over the limit is refused before reading;
// an undeclared one is cut off by http.MaxBytesReader after limit+1 bytes.
// Either is a 413.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) (body []byte, release func(), err error) {
	if r.ContentLength > limit {
		return nil, func() {}, tooLarge(limit)
	}
	size := r.ContentLength
	if size < 0 {
		size = min(limit, 64<<10)
	}
	buf := bodies.Get().(*bytes.Buffer)
	buf.Reset()
	release = func() {
		if buf.Cap() <= maxPooledBody {
			bodies.Put(buf)
		}
	}
	// Room for the body plus the final read that sees EOF, so a declared
	// length is read without growing the buffer.
	buf.Grow(int(size) + bytes.MinRead)
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, limit)); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, release, tooLarge(limit)
		}
		return nil, release, badRequest("reading the body", err)
	}
	return buf.Bytes(), release, nil
}

func tooLarge(limit int64) error {
	return &statusError{code: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf("body exceeds %d bytes", limit)}
}

// jsonPayload returns the JSON document of a verified body. An empty
// Content-Type is read as JSON; the signature already vouches for the sender.
func jsonPayload(contentType string, body []byte) ([]byte, error) {
	if contentType == mediaJSON || contentType == "" {
		return body, nil
	}
	media, _, err := mime.ParseMediaType(contentType)
	switch {
	case err != nil:
		return nil, unsupportedMedia(contentType)
	case media == mediaJSON:
		return body, nil
	case media == mediaForm:
		return formPayload(body)
	default:
		return nil, unsupportedMedia(contentType)
	}
}

func formPayload(body []byte) ([]byte, error) {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, badRequest("malformed form body", err)
	}
	if !form.Has("payload") {
		return nil, badRequest("form body has no payload field", nil)
	}
	return []byte(form.Get("payload")), nil
}

func unsupportedMedia(contentType string) error {
	return &statusError{
		code: http.StatusUnsupportedMediaType,
		msg:  fmt.Sprintf("Content-Type %q is not supported: send %s or %s", contentType, mediaJSON, mediaForm),
	}
}
