package checks

import "unicode/utf8"

// Clean makes tool output readable where it is shown as text (GitHub's
// check runs, the run page): it removes ANSI escape sequences (CSI such as
// colours and cursor moves, OSC such as titles and hyperlinks, and the
// two-byte ones) and every other control character but newline and tab.
// A carriage return that does not end a line overwrites it, as on a
// terminal: only what follows the last one stays (progress bars). Bytes
// that are not UTF-8 become U+FFFD. The raw
// logs keep the bytes as the tools wrote them.
func Clean(s string) string {
	if !needsClean(s) {
		return s
	}
	b := make([]byte, 0, len(s))
	line := 0 // where the current line starts in b
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 0x1b:
			i = escapeEnd(s, i)
		case c == '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
				continue
			}
			b = b[:line] // overwrite: drop what this line had so far
			i++
		case c == '\n':
			b = append(b, c)
			line = len(b)
			i++
		case c == '\t' || (c >= 0x20 && c < 0x7f):
			b = append(b, c)
			i++
		case c < 0x80: // other C0 controls and DEL
			i++
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == 0x9b { // C1 CSI
				i = csiEnd(s, i+n)
				continue
			}
			switch {
			case r == utf8.RuneError && n == 1:
				// A stray byte becomes U+FFFD, so no removal can join two
				// into a character (or a control) that was not there.
				b = append(b, "\uFFFD"...)
			case r < 0x80 || r > 0x9f: // C1 controls go
				b = append(b, s[i:i+n]...)
			}
			i += n
		}
	}
	return string(b)
}

// needsClean reports whether s has anything Clean removes, so that clean
// text (the common case) costs one pass and no allocation.
func needsClean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
			return true
		}
		if c == 0xc2 && i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] <= 0x9f {
			return true
		}
	}
	return false
}

// escapeEnd returns the index after the escape sequence starting at s[i]
// (an ESC). An unterminated sequence runs to the end of s.
func escapeEnd(s string, i int) int {
	i++
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[':
		return csiEnd(s, i+1)
	case ']', 'P', '_', '^', 'X': // OSC, DCS, APC, PM, SOS: up to BEL or ST
		for j := i + 1; j < len(s); j++ {
			if s[j] == 0x07 {
				return j + 1
			}
			if s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\' {
				return j + 2
			}
		}
		return len(s)
	}
	// ESC, intermediates (0x20-0x2f), one final byte: ESC ( B, ESC =, ESC 7.
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
		i++
	}
	return i
}

// csiEnd returns the index after a CSI sequence whose parameters start at
// s[i]: parameter and intermediate bytes, then a final byte.
func csiEnd(s string, i int) int {
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x3f {
		i++
	}
	if i < len(s) && s[i] >= 0x40 && s[i] <= 0x7e {
		i++
	}
	return i
}
