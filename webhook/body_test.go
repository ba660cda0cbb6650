package webhook

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// zeros is an endless-looking body of n zero bytes that counts what was read
// from it, to show the handler stops at the cap.
type zeros struct{ n, read int64 }

func (z *zeros) Read(p []byte) (int, error) {
	if z.read >= z.n {
		return 0, io.EOF
	}
	k := min(int64(len(p)), z.n-z.read)
	clear(p[:k])
	z.read += k
	return int(k), nil
}

func TestOversizeBody(t *testing.T) {
	const size = DefaultMaxBody + 1
	tests := []struct {
		name     string
		declared bool
		maxRead  int64
	}{
		// A declared length over the cap is refused before reading.
		{name: "declared length", declared: true, maxRead: 0},
		// Without one, reading stops one byte past the cap.
		{name: "chunked", declared: false, maxRead: DefaultMaxBody + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := &fakeSink{}
			h := newHandler(t, Config{}, sink)
			body := &zeros{n: size}
			r := delivery("pull_request", "d-1", nil)
			r.Body = io.NopCloser(body)
			r.ContentLength = -1
			if tt.declared {
				r.ContentLength = size
			}
			code, rep := serve(t, h, r)
			if code != http.StatusRequestEntityTooLarge || !strings.Contains(rep.Error, "exceeds") {
				t.Errorf("status %d (%+v), want 413", code, rep)
			}
			if body.read > tt.maxRead {
				t.Errorf("read %d bytes of the body, want at most %d", body.read, tt.maxRead)
			}
			if len(sink.recorded()) != 0 {
				t.Error("an oversize delivery reached the sink")
			}
		})
	}
}

// TestBodyAtCap: a body of exactly the cap is read and verified.
func TestBodyAtCap(t *testing.T) {
	const limit = 1 << 10
	pad := limit - len(`{"hook_id":1,"zen":""}`)
	body := []byte(`{"hook_id":1,"zen":"` + strings.Repeat("z", pad) + `"}`)
	h := newHandler(t, Config{MaxBody: limit}, &fakeSink{})
	for _, tt := range []struct {
		body []byte
		want int
	}{{body, http.StatusAccepted}, {append(body, ' '), http.StatusRequestEntityTooLarge}} {
		r := delivery("ping", "d-1", tt.body)
		r.ContentLength = -1 // not declared: the reader must enforce the cap
		if code, rep := serve(t, h, r); code != tt.want {
			t.Errorf("%d-byte body: status %d (%+v), want %d", len(tt.body), code, rep, tt.want)
		}
	}
}

// TestUnreadableBody: a sender that breaks off mid-body gets a 400.
func TestUnreadableBody(t *testing.T) {
	h := newHandler(t, Config{}, &fakeSink{})
	r := delivery("ping", "d-1", nil)
	r.Body = io.NopCloser(io.MultiReader(strings.NewReader(`{"zen":`), errReader{}))
	r.ContentLength = -1
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusBadRequest {
		t.Errorf("status %d, want 400", w.Code)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }

// TestPooledBodyIsNotRetained: body buffers are reused, so what a sink was
// given must not change when the next delivery overwrites the buffer.
func TestPooledBodyIsNotRetained(t *testing.T) {
	sink := &fakeSink{}
	h := newHandler(t, Config{}, sink)
	first := fixture(t, "pull_request.opened.json")
	if code, rep := serve(t, h, delivery("pull_request", "d-1", first)); code != http.StatusAccepted {
		t.Fatalf("first delivery: %d %+v", code, rep)
	}
	// A copy made now: the event's own strings are what is under test.
	want, err := json.Marshal(sink.recorded()[0].ev)
	if err != nil {
		t.Fatal(err)
	}
	// The same length, other bytes: every letter of the payload shifted.
	other := edit(t, first, func(m map[string]any) {
		pr := obj(t, m, "pull_request")
		pr["number"] = 99
		obj(t, pr, "head")["sha"] = strings.Repeat("f", 40)
		obj(t, m, "repository")["full_name"] = "zz/zzzzzzzzz"
	})
	for i := range 20 {
		serve(t, h, delivery("pull_request", "d-other-"+strings.Repeat("x", i), other))
	}
	got, err := json.Marshal(sink.recorded()[0].ev)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("the first event changed after later deliveries:\n got %s\nwant %s", got, want)
	}
}
