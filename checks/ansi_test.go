package checks

import (
	"fmt"
	"testing"
	"unicode"
)

// controlIn describes the first control character of s other than
// newline and tab, "" when there is none.
func controlIn(s string) string {
	for i, r := range s {
		if r != '\n' && r != '\t' && unicode.IsControl(r) {
			return fmt.Sprintf("%U at byte %d", r, i)
		}
	}
	return ""
}

func TestClean(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text\n\twith a tab", "plain text\n\twith a tab"},
		{"\x1b[1m\x1b[31mE  assert\x1b[0m", "E  assert"},
		{"\x1b[39;49;00mx\x1b[?25l\x1b[2K", "x"},                    // params, private mode, erase
		{"\x1b]8;;https://example.com\x07link\x1b]8;;\x07", "link"}, // OSC 8 hyperlink, BEL
		{"\x1b]0;title\x1b\\after", "after"},                        // OSC ended by ST
		{"\x1b(Bascii\x1b=\x1b7", "ascii"},                          // charset, keypad, save
		{"line\r\nnext\r\n", "line\nnext\n"},                        // CRLF
		{"  0%\r 50%\r100%\ndone", "100%\ndone"},                    // progress overwrites
		{"bell\x07 back\bspace\x00nul\x7f", "bell backspacenul"},    // C0 and DEL
		{"c1 \u009b31mred\u0085 ok", "c1 red ok"},                   // C1 CSI and NEL
		{"ünïcødé ✓ stays", "ünïcødé ✓ stays"},                      // UTF-8
		{"cut \x1b[31", "cut "},                                     // unterminated
		{"cut \x1b]0;no end", "cut "},                               // unterminated OSC
		{"\x1b", ""},
		{"\xc2\x00\x80", "\uFFFD\uFFFD"}, // no stray bytes joined into a C1 control
	}
	for _, tt := range tests {
		if got := Clean(tt.in); got != tt.want {
			t.Errorf("Clean(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestRedactCleans: everything that reaches GitHub or the run page goes
// through the Redactor, so it cleans too; an escape inside a secret cannot
// hide it.
func TestRedactCleans(t *testing.T) {
	secret := "s3cr3t-value-0123456789"
	r := NewRedactor(secret)
	got := r.Redact("token \x1b[1m" + secret[:6] + "\x1b[0m" + secret[6:] + "\x1b[0m!")
	if want := "token " + Redacted + "!"; got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
}

func FuzzClean(f *testing.F) {
	f.Add("\x1b[1mbold\x1b[0m\r\nline\rover\x07")
	f.Add("\x1b]8;;u\x1b\\t\u009b1m")
	f.Fuzz(func(t *testing.T, s string) {
		got := Clean(s)
		if bad := controlIn(got); bad != "" {
			t.Errorf("Clean(%q) = %q keeps %s", s, got, bad)
		}
		if again := Clean(got); again != got {
			t.Errorf("Clean is not idempotent on %q: %q then %q", s, got, again)
		}
	})
}
