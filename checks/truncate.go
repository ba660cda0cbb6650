package checks

import (
	"fmt"
	"strings"
)

// MaxOutput is GitHub's limit on a check run's output.summary and
// output.text. GitHub counts characters; bytes are never fewer, so a
// string within MaxOutput bytes is within the limit.
const MaxOutput = 65535

// Truncate returns s unchanged when it fits in max bytes. Otherwise it
// cuts the middle out, because logs begin with what ran and end with what
// went wrong and both matter, and puts in its place a line saying how
// many bytes were cut and where the full log is (fullLogURL, if any). The
// cut falls on line boundaries when that keeps most of the budget, and
// never inside a UTF-8 sequence. A max too small for the marker line
// keeps only a prefix.
func Truncate(s string, max int, fullLogURL string) string {
	if len(s) <= max {
		return s
	}
	if max <= 0 {
		return ""
	}
	// The marker's length grows with the count it prints; len(s) bounds
	// that count, so budgeting for it leaves room for the real one.
	room := max - len(cutMarker(len(s), fullLogURL))
	if room < 2 {
		return cutRunes(s, max)
	}
	head := headPart(s, room/2)
	tail := tailPart(s, room-room/2)
	return head + cutMarker(len(s)-len(head)-len(tail), fullLogURL) + tail
}

// cutMarker is the line that replaces what Truncate removed. It is plain
// text so it reads the same inside and outside a code block.
func cutMarker(n int, url string) string {
	m := fmt.Sprintf("\n[… %d bytes cut from the middle", n)
	if url != "" {
		m += "; full log: " + url
	}
	return m + " …]\n"
}

// headPart is at most n bytes from the start of s, ending after a newline
// when one falls in the second half of that budget.
func headPart(s string, n int) string {
	h := cutRunes(s, n)
	if i := strings.LastIndexByte(h, '\n'); i >= len(h)/2 {
		return h[:i+1]
	}
	return h
}

// tailPart is at most n bytes from the end of s, starting after a newline
// when one falls in the first half of that budget.
func tailPart(s string, n int) string {
	t := suffixRunes(s, n)
	if i := strings.IndexByte(t, '\n'); i >= 0 && i < len(t)/2 {
		return t[i+1:]
	}
	return t
}
