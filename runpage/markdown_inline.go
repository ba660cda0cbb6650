package runpage

import (
	"html"
	"strings"
	"unicode"
	"unicode/utf8"
)

// inline renders the inline Markdown of one block as HTML.
func inline(s string) string {
	var b, text strings.Builder
	flush := func() {
		// Entities the reports wrote (&lt;) read as their characters,
		// then everything is escaped once.
		b.WriteString(html.EscapeString(html.UnescapeString(text.String())))
		text.Reset()
	}
	strong, em := false, false
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && isPunct(s[i+1]):
			text.WriteString(html.EscapeString(s[i+1 : i+2])) // survives the unescape as the character
			i += 2
			continue
		case c == '\n':
			flush()
			b.WriteString("<br>\n")
			i++
			continue
		case c == '`':
			if body, n := codeSpan(s[i:]); n > 0 {
				flush()
				b.WriteString("<code>" + html.EscapeString(body) + "</code>")
				i += n
				continue
			}
		case c == '*' && strings.HasPrefix(s[i:], "**") && (strong || strings.Contains(s[i+2:], "**")):
			flush()
			b.WriteString(map[bool]string{false: "<strong>", true: "</strong>"}[strong])
			strong = !strong
			i += 2
			continue
		case c == '_' && (em && !wordAfter(s, i+1) || !em && !wordBefore(s, i) && opensEm(s, i)):
			flush()
			b.WriteString(map[bool]string{false: "<em>", true: "</em>"}[em])
			em = !em
			i++
			continue
		case c == '[':
			if label, href, n := linkAt(s[i:]); n > 0 {
				flush()
				b.WriteString(anchor(label, href))
				i += n
				continue
			}
		}
		text.WriteByte(c)
		i++
	}
	flush()
	if em {
		b.WriteString("</em>")
	}
	if strong {
		b.WriteString("</strong>")
	}
	return b.String()
}

func isPunct(c byte) bool {
	return c < 0x80 && unicode.IsPunct(rune(c)) || c == '`' || c == '|' || c == '<' || c == '>'
}

func wordBefore(s string, i int) bool {
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return i > 0 && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

func wordAfter(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return i < len(s) && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// Inline markup spans at most this many bytes: the look-ahead for a
// closing _ or ] is bounded, so no input makes rendering quadratic.
const maxSpan = 1024

// opensEm reports whether the _ at i has a closing _ later in the block
// with text between.
func opensEm(s string, i int) bool {
	if i+1 >= len(s) || s[i+1] == ' ' || s[i+1] == '_' {
		return false
	}
	for j := i + 2; j < min(len(s), i+maxSpan); j++ {
		if s[j] == '_' && s[j-1] != '\\' && !wordAfter(s, j+1) {
			return true
		}
	}
	return false
}

// codeSpan reads a code span at the start of s: a run of backticks, the
// body, the same run again. n is 0 when the run is not closed.
func codeSpan(s string) (body string, n int) {
	open := runLen(s, 0)
	for j := open; j < min(len(s), open+maxSpan); {
		if s[j] != '`' {
			j++
			continue
		}
		k := runLen(s, j)
		if k != open {
			j += k
			continue
		}
		body = strings.ReplaceAll(s[open:j], "\n", " ")
		if len(body) >= 2 && body[0] == ' ' && body[len(body)-1] == ' ' && strings.Trim(body, " ") != "" {
			body = body[1 : len(body)-1]
		}
		return body, j + k
	}
	return "", 0
}

// runLen is the length of the run of backticks at s[i:].
func runLen(s string, i int) int {
	n := 0
	for i+n < len(s) && s[i+n] == '`' {
		n++
	}
	return n
}

// linkAt reads [label](href) at the start of s.
func linkAt(s string) (label, href string, n int) {
	depth := 0
	for i := 0; i < min(len(s), maxSpan); i++ {
		switch s[i] {
		case '\\':
			i++
		case '[':
			depth++
		case ']':
			if depth--; depth > 0 {
				continue
			}
			if !strings.HasPrefix(s[i+1:], "(") {
				return "", "", 0
			}
			end := strings.IndexByte(s[i+2:min(len(s), i+2+maxSpan)], ')')
			if end < 0 || strings.ContainsAny(s[i+2:i+2+end], " \n") {
				return "", "", 0
			}
			return s[1:i], s[i+2 : i+2+end], i + 3 + end
		}
	}
	return "", "", 0
}

// anchor is a link to href when it is http(s), root-relative or a
// fragment, and the label alone otherwise.
func anchor(label, href string) string {
	h := html.UnescapeString(href)
	safe := strings.HasPrefix(h, "https://") || strings.HasPrefix(h, "http://") ||
		strings.HasPrefix(h, "#") || strings.HasPrefix(h, "/") && !strings.HasPrefix(h, "//")
	if !safe {
		return inline(label)
	}
	return `<a href="` + html.EscapeString(h) + `">` + inline(label) + `</a>`
}
