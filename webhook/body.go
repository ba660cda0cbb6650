package webhook

import (
	"errors"
	"fmt"
	"io"
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

// bodyChunk is the most a body reads at once, and the room it reserves in
// the budget ahead of each read: a connection that declares a large body
// and sends one byte holds one chunk, not its declared length.
const bodyChunk = 16 << 10

// maxPooledBody is the largest buffer kept for reuse; a rare huge delivery
// must not pin its memory.
const maxPooledBody = 1 << 20

// bodyPool recycles body buffers: a pull_request payload is some 28 KB, and
// allocating one per delivery made the garbage collector a noticeable part
// of a delivery's cost. Nothing decoded from a body refers to its bytes
// (decoded strings are copies), so a buffer is reused once its delivery
// is answered.
// Buffers travel as *[]byte so that putting one back allocates nothing;
// only a body's final buffer goes back, so the pool fills with buffers
// the size deliveries need and a pooled one rarely has to grow.
type bodyPool struct{ pool sync.Pool }

func (p *bodyPool) get() *[]byte {
	if b, ok := p.pool.Get().(*[]byte); ok {
		*b = (*b)[:0]
		return b
	}
	return new([]byte)
}

func (p *bodyPool) put(b *[]byte) {
	if c := cap(*b); c > 0 && c <= maxPooledBody {
		p.pool.Put(b)
	}
}

// body is one delivery's body as it arrives: buf grows only as bytes come,
// never to a declared length, and reserved is what it holds of the budget.
type body struct {
	buf      []byte
	reserved int64
	limit    int64 // the body's cap
	budget   *budget
	pool     *bodyPool
	pooled   *[]byte // what buf came in, and goes back to the pool in
}

// readBody reads the whole body, at most limit bytes, as it arrives. It
// returns a release func (never nil) that gives the buffer and its share of
// the budget back; call it once the body is no longer used. A declared
// length over the limit is refused before reading, and an undeclared one is
// cut off by http.MaxBytesReader after limit+1 bytes: both are 413. A body
// that does not fit in the budget for bodies in flight is 503.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) (data []byte, release func(), err error) {
	limit := h.cfg.MaxBody
	if r.ContentLength > limit {
		return nil, func() {}, tooLarge(limit)
	}
	pooled := h.bodies.get()
	b := &body{buf: *pooled, pooled: pooled, limit: limit, budget: h.budget, pool: &h.bodies}
	src := http.MaxBytesReader(w, r.Body, limit)
	for {
		// Room for one more chunk, and never less than one byte past the
		// limit, so that the read which sees EOF (or the cap) has room.
		if !b.room(min(bodyChunk, limit+1-int64(len(b.buf)))) {
			return nil, b.release, overBudget(h.budget.limit)
		}
		n, err := src.Read(b.buf[len(b.buf):cap(b.buf)])
		b.buf = b.buf[:len(b.buf)+n]
		switch {
		case err == io.EOF:
			return b.buf, b.release, nil
		case err == nil:
		case isMaxBytes(err):
			return nil, b.release, tooLarge(limit)
		default:
			return nil, b.release, badRequest("reading the body", err)
		}
	}
}

// room makes space for n more bytes, reserving them first. The buffer at
// least doubles when it grows, so that a large body costs few copies; it
// then holds at most twice what it reserved.
func (b *body) room(n int64) bool {
	need := int64(len(b.buf)) + n
	if need > b.reserved {
		if !b.budget.take(need - b.reserved) {
			return false
		}
		b.reserved = need
	}
	if int64(cap(b.buf)) < need {
		grown := make([]byte, len(b.buf), max(need, min(2*int64(cap(b.buf)), b.limit+1)))
		copy(grown, b.buf)
		b.buf = grown
	}
	return true
}

func (b *body) release() {
	b.budget.give(b.reserved)
	b.reserved = 0
	*b.pooled = b.buf
	b.pool.put(b.pooled)
	b.buf = nil
}

func isMaxBytes(err error) bool {
	_, ok := errors.AsType[*http.MaxBytesError](err)
	return ok
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
