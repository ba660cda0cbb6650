package sandbox

import "sync"

// Tail is an io.Writer that keeps the last n bytes written to it, for
// output held in memory (a tool node's tool.output). It is safe for
// concurrent use, so stdout and stderr may share one.
type Tail struct {
	mu    sync.Mutex
	n     int
	buf   []byte // grows to n, then is used as a ring starting at start
	start int
	total int64
}

// NewTail returns a Tail that keeps the last n bytes (none if n <= 0).
func NewTail(n int) *Tail {
	return &Tail{n: max(n, 0)}
}

// Write keeps the end of p. It never fails, so a writer of any volume
// can be drained into it.
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.write(p)
	return len(p), nil
}

func (t *Tail) write(p []byte) {
	t.total += int64(len(p))
	if len(p) >= t.n {
		t.buf = append(t.buf[:0], p[len(p)-t.n:]...)
		t.start = 0
		return
	}
	if room := t.n - len(t.buf); room > 0 {
		k := min(room, len(p))
		t.buf = append(t.buf, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 {
		k := copy(t.buf[t.start:], p)
		p = p[k:]
		t.start = (t.start + k) % t.n
	}
}

// Bytes returns a copy of the bytes kept, oldest first.
func (t *Tail) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.bytes()
}

func (t *Tail) bytes() []byte {
	out := make([]byte, 0, len(t.buf))
	out = append(out, t.buf[t.start:]...)
	return append(out, t.buf[:t.start]...)
}

// Truncated reports whether more was written than is kept.
func (t *Tail) Truncated() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total > int64(t.n)
}

// Written returns the number of bytes written, kept or not.
func (t *Tail) Written() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total
}
