package sandbox

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"unicode/utf8"
)

// markerReserve is the room a CappedFile keeps for its truncation marker.
const markerReserve = 128

// CappedFile is an io.Writer to a log file that never grows past max bytes.
// Until max is reached the file holds exactly what was written, appended as
// it comes, so the run page can follow it live. Past max it holds a marker
// line saying how much was dropped, then the last bytes written (the tail
// is where a failing build explains itself). Past max the file is rewritten
// after every max/2 new bytes and on Close, so it lags the output by at most
// that much. It is safe for concurrent use: stdout and stderr may share one.
type CappedFile struct {
	mu      sync.Mutex
	f       *os.File
	max     int64
	written int64
	tail    *Tail // nil until the output first exceeds max
	unsaved int64 // bytes in tail not yet in the file
	closed  bool
}

// NewCappedFile creates (or truncates) the file at path, to hold at most
// max bytes; max must leave room for the marker line (at least 256).
func NewCappedFile(path string, max int64) (*CappedFile, error) {
	if max < 2*markerReserve {
		return nil, fmt.Errorf("sandbox: capped file %s: max %d is below %d", path, max, 2*markerReserve)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("sandbox: capped file: %w", err)
	}
	return &CappedFile{f: f, max: max}, nil
}

// Write accepts all of p; what falls outside the cap is dropped, not
// refused, so the process producing it is not disturbed. Only a failing
// file is an error.
func (c *CappedFile) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, os.ErrClosed
	}
	if c.tail == nil && c.written+int64(len(p)) <= c.max {
		n, err := c.f.Write(p)
		c.written += int64(n)
		if err != nil {
			return n, fmt.Errorf("sandbox: capped file: %w", err)
		}
		return n, nil
	}
	if err := c.overflow(); err != nil {
		return 0, err
	}
	c.written += int64(len(p))
	c.tail.write(p)
	c.unsaved += int64(len(p))
	if c.unsaved >= c.max/2 {
		if err := c.save(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// overflow moves the output so far into the in-memory tail the first time
// the cap is exceeded; the file then holds exactly that output.
func (c *CappedFile) overflow() error {
	if c.tail != nil {
		return nil
	}
	head := make([]byte, c.written)
	if _, err := c.f.ReadAt(head, 0); err != nil {
		return fmt.Errorf("sandbox: capped file: read back: %w", err)
	}
	c.tail = NewTail(int(c.max - markerReserve))
	c.tail.write(head)
	return nil
}

// save rewrites the file as marker + tail. Writing over the old content and
// then truncating means a reader never sees an empty file.
func (c *CappedFile) save() error {
	kept := c.tail.bytes()
	for i := 0; i < utf8.UTFMax-1 && len(kept) > 0 && !utf8.RuneStart(kept[0]); i++ {
		kept = kept[1:] // start on a character, not inside one
	}
	marker := fmt.Sprintf("[output truncated: %d earlier bytes dropped, last %d of %d kept]\n",
		c.written-int64(len(kept)), len(kept), c.written)
	content := append([]byte(marker), kept...)
	if _, err := c.f.WriteAt(content, 0); err != nil {
		return fmt.Errorf("sandbox: capped file: %w", err)
	}
	if err := c.f.Truncate(int64(len(content))); err != nil {
		return fmt.Errorf("sandbox: capped file: %w", err)
	}
	c.unsaved = 0
	return nil
}

// Truncated reports whether output was dropped.
func (c *CappedFile) Truncated() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.written > c.max
}

// Written returns the number of bytes written, kept or not.
func (c *CappedFile) Written() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.written
}

// Close writes the final tail and closes the file. Closing twice is a no-op.
func (c *CappedFile) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	var err error
	if c.tail != nil && c.unsaved > 0 {
		err = c.save()
	}
	return errors.Join(err, c.f.Close())
}
