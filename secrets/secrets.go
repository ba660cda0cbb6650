// Package secrets knows the forms a secret value takes on its way out of
// the bot (the value itself, base64 of it and of git's "x-access-token:"
// credential, URL escaping) and finds them in files. The checks package
// redacts these forms from everything it publishes; the runner refuses a
// checkpoint whose files hold one. It imports nothing of ours.
package secrets

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"syscall"
)

// MinLen is the shortest value treated as a secret: shorter ones are as
// likely to be ordinary words.
const MinLen = 8

// Forms returns s and the encodings it takes on the way out, s first.
// Values shorter than MinLen, or spanning lines, yield only themselves.
func Forms(s string) []string {
	out := []string{s}
	if len(s) < MinLen || strings.Contains(s, "\n") {
		return out
	}
	for _, f := range []string{url.QueryEscape(s), url.PathEscape(s)} {
		out = appendNew(out, f)
	}
	for _, v := range []string{s, "x-access-token:" + s} {
		b := []byte(v)
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			out = appendNew(out, enc.EncodeToString(b))
		}
	}
	return out
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// A Secret is a value to look for, under a name that can be shown (the
// variable that held it, "the webhook secret").
type Secret struct {
	Name  string
	Value string
}

// Scanner finds the forms of known secrets in files. The zero value and
// nil find nothing.
type Scanner struct {
	needles []needle
	longest int
}

type needle struct {
	name, form string
	encoded    bool
}

// NewScanner looks for every form of every secret of at least MinLen
// bytes.
func NewScanner(list []Secret) *Scanner {
	s := &Scanner{}
	for _, sec := range list {
		v := strings.TrimSpace(sec.Value)
		if len(v) < MinLen || strings.Contains(v, "\n") {
			continue
		}
		for i, f := range Forms(v) {
			s.needles = append(s.needles, needle{name: sec.Name, form: f, encoded: i > 0})
			s.longest = max(s.longest, len(f))
		}
	}
	return s
}

// Found is where a secret was found. It never carries the secret.
type Found struct {
	Line    int    // 1-based
	Name    string // the secret's name
	Encoded bool   // an encoding of it rather than the value itself
}

// String says what was found, without the line (callers put it after the
// file name) and without the secret.
func (f Found) String() string {
	if f.Encoded {
		return "holds an encoded form of " + f.Name
	}
	return "holds " + f.Name
}

// ErrNotRegular reports a path that is neither a regular file nor a link.
var ErrNotRegular = errors.New("not a regular file")

// ScanPath looks in the file at path without following a link: a symbolic
// link is judged by its target's text, which is what git commits.
func (s *Scanner) ScanPath(path string) (Found, bool, error) {
	if s == nil || len(s.needles) == 0 {
		return Found{}, false, nil
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return Found{}, false, err
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		target, err := os.Readlink(path)
		if err != nil {
			return Found{}, false, err
		}
		return s.Scan(strings.NewReader(target))
	case !fi.Mode().IsRegular():
		return Found{}, false, fmt.Errorf("%s: %w", path, ErrNotRegular)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return Found{}, false, err
	}
	defer f.Close()
	return s.Scan(f)
}

// Scan reads r to its end, in chunks that overlap by the longest form so
// that none is missed at a boundary, and reports the first form found.
func (s *Scanner) Scan(r io.Reader) (Found, bool, error) {
	if s == nil || len(s.needles) == 0 {
		return Found{}, false, nil
	}
	br := bufio.NewReaderSize(r, 64<<10)
	buf := make([]byte, 0, 64<<10+s.longest)
	line := 1 // line of buf[0]
	for {
		n, err := io.ReadFull(br, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if f, ok := s.find(buf, line); ok {
			return f, true, nil
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return Found{}, false, nil
		}
		if err != nil {
			return Found{}, false, err
		}
		keep := min(len(buf), s.longest-1)
		line += bytes.Count(buf[:len(buf)-keep], []byte{'\n'})
		buf = append(buf[:0], buf[len(buf)-keep:]...)
	}
}

func (s *Scanner) find(buf []byte, line int) (Found, bool) {
	best, at := -1, needle{}
	for _, n := range s.needles {
		if i := bytes.Index(buf, []byte(n.form)); i >= 0 && (best < 0 || i < best) {
			best, at = i, n
		}
	}
	if best < 0 {
		return Found{}, false
	}
	return Found{Line: line + bytes.Count(buf[:best], []byte{'\n'}), Name: at.name, Encoded: at.encoded}, true
}
