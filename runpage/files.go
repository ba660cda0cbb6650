package runpage

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
)

// Caps on what Load reads of each file, from its end.
const (
	maxCheckpoint = 8 << 20
	maxProgress   = 4 << 20
	maxReport     = 256 << 10
	maxStatus     = 256 << 10
	maxGraph      = 1 << 20
	// redactMargin is read before a tail and redacted with it, then cut
	// off: a secret that straddles the cut is recognised whole rather than
	// shown in part. It exceeds a 4096-bit PEM key.
	redactMargin = 8 << 10
)

// tail reads at most max bytes from the end of name in root. cut is how
// many bytes before them were left out; a missing file is fs.ErrNotExist.
func tail(root *os.Root, name string, max int) (data []byte, cut int64, err error) {
	// Nodes can write in their stage directories: a FIFO there must not
	// block the page, and only regular files are shown.
	f, st, err := safefile.Open(root, name)
	if errors.Is(err, safefile.ErrNotRegular) {
		return nil, 0, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	if size := st.Size(); size > int64(max) {
		cut = size - int64(max)
		if _, err := f.Seek(cut, io.SeekStart); err != nil {
			return nil, 0, fmt.Errorf("seek %s: %w", name, err)
		}
	}
	data, err = io.ReadAll(io.LimitReader(f, int64(max)))
	if err != nil {
		return nil, 0, fmt.Errorf("read %s: %w", name, err)
	}
	return data, cut, nil
}

// text is the redacted end of a file, at most max bytes of valid UTF-8.
type text struct {
	s   string
	cut int64 // bytes before s not shown
}

// redactedTail reads name's end with a margin, redacts, then cuts to max,
// so that redaction always sees whole secrets.
func (p *Pages) redactedTail(root *os.Root, name string, max int) (text, error) {
	data, cut, err := tail(root, name, max+redactMargin)
	if err != nil {
		return text{}, err
	}
	s := p.opts.Redactor.Redact(string(data))
	if len(s) > max {
		drop := len(s) - max
		// Start on a character, not inside one.
		for drop < len(s) && !utf8.RuneStart(s[drop]) {
			drop++
		}
		cut += int64(drop) // approximately: redaction changed lengths
		s = s[drop:]
	}
	return text{s: strings.ToValidUTF8(s, "\uFFFD"), cut: cut}, nil
}

// lines splits data into lines; when data starts mid-file the first,
// partial line is dropped.
func lines(data []byte, partial bool) [][]byte {
	if partial {
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[i+1:]
		} else {
			data = nil
		}
	}
	var out [][]byte
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(bytes.TrimSpace(line)) > 0 {
			out = append(out, line)
		}
	}
	return out
}

func notExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
