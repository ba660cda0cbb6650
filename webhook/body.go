package webhook

import (
	"bytes"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
)

// Media types a delivery may use. GitHub sends the JSON payload as the body
// (application/json) or, for hooks configured that way, as the form field
// "payload" (application/x-www-form-urlencoded); the signature covers the
// body as sent in both cases.
const (
	mediaJSON = "application/json"
	mediaForm = "application/x-www-form-urlencoded"
)

// readBody reads the whole body, at most limit bytes. A declared length over
// the limit is refused before reading; an undeclared one is cut off by
// http.MaxBytesReader after limit+1 bytes. Either is a 413.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, tooLarge(limit)
	}
	size := r.ContentLength
	if size < 0 {
		size = min(limit, 64<<10)
	}
	// Room for the body plus the final read that sees EOF, so a declared
	// length is read without growing the buffer.
	buf := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead))
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, limit)); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, tooLarge(limit)
		}
		return nil, badRequest("reading the body", err)
	}
	return buf.Bytes(), nil
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
