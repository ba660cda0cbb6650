package image

import (
	"errors"
	"io"
)

// Read-ahead of a layer: its fetching, decompressing and hashing run in
// a goroutine of their own, up to readaheadChunks chunks ahead of the
// unpacking that writes its files, so that the two overlap
// (BenchmarkFirstPullVsPodman). The cap on what is unpacked still stops a
// layer bomb early: the goroutine waits while readaheadChunks are unread.
const (
	readaheadChunks = 16
	readaheadChunk  = 256 << 10
)

type readahead struct {
	chunks chan []byte   // read, in order; closed after err is set
	free   chan []byte   // buffers to read into
	done   chan struct{} // closed by Close: the goroutine stops
	exited chan struct{} // closed when the goroutine has stopped
	err    error         // why reading stopped: io.EOF at the end
	cur    []byte        // what Read has not returned of buf
	buf    []byte
}

func newReadahead(r io.Reader) *readahead {
	ra := &readahead{chunks: make(chan []byte, readaheadChunks), free: make(chan []byte, readaheadChunks+1),
		done: make(chan struct{}), exited: make(chan struct{})}
	for range readaheadChunks + 1 {
		ra.free <- make([]byte, readaheadChunk)
	}
	go ra.fill(r)
	return ra
}

func (ra *readahead) fill(r io.Reader) {
	defer close(ra.exited)
	defer close(ra.chunks)
	for {
		var b []byte
		select {
		case b = <-ra.free:
		case <-ra.done:
			ra.err = errors.New("read-ahead closed")
			return
		}
		n, err := fillBuf(r, b)
		if n > 0 {
			select {
			case ra.chunks <- b[:n]:
			case <-ra.done:
				ra.err = errors.New("read-ahead closed")
				return
			}
		}
		if err != nil {
			ra.err = err
			return
		}
	}
}

// fillBuf reads into b until it is full or r fails (io.EOF included).
func fillBuf(r io.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		k, err := r.Read(b[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func (ra *readahead) Read(p []byte) (int, error) {
	for len(ra.cur) == 0 {
		if ra.buf != nil {
			ra.free <- ra.buf[:cap(ra.buf)] // never blocks: free holds every buffer
			ra.buf = nil
		}
		b, ok := <-ra.chunks
		if !ok {
			return 0, ra.err
		}
		ra.buf, ra.cur = b, b
	}
	n := copy(p, ra.cur)
	ra.cur = ra.cur[n:]
	return n, nil
}

// Close stops the goroutine and waits for it, so that the reader it reads
// may be closed.
func (ra *readahead) Close() {
	close(ra.done)
	<-ra.exited
}
