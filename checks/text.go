package checks

import (
	"strings"
	"unicode/utf8"
)

// firstNonEmpty returns the first of ss that is not empty.
func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// firstLine is the first non-blank line of s, trimmed.
func firstLine(s string) string {
	for line := range strings.SplitSeq(s, "\n") {
		if t := strings.TrimSpace(line); t != "" {
			return t
		}
	}
	return ""
}

// clip shortens s to at most max bytes on a UTF-8 boundary, ending in an
// ellipsis when it cut.
func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const ell = "…"
	if max < len(ell) {
		return cutRunes(s, max)
	}
	return cutRunes(s, max-len(ell)) + ell
}

// cutRunes returns the longest prefix of s of at most n bytes that does
// not end inside a UTF-8 sequence.
func cutRunes(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// suffixRunes returns the longest suffix of s of at most n bytes that
// starts on a UTF-8 boundary.
func suffixRunes(s string, n int) string {
	if n >= len(s) {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}
