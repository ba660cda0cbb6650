package webhook

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// jscanValid is jscan used as a validator: one value, skipped.
func jscanValid(doc []byte) bool {
	s := &jscan{buf: doc}
	return s.document(s.skipValue)
}

// validityCases are documents on which jscan must agree with json.Valid,
// either way.
var validityCases = []string{
	``, ` `, `null`, `true`, `false`, `nul`, `nulll`, `tru`, `True`, `NaN`, `Infinity`,
	`0`, `-0`, `-`, `01`, `-01`, `00`, `1.`, `.5`, `1.5`, `-1.5e10`, `1e5`, `1E+5`, `1e-5`,
	`1e`, `1e+`, `1.e5`, `+1`, `0x10`, `1_000`, `123456789012345678901234567890`, `1e400`,
	`""`, `"a"`, `"\"\\\/\b\f\n\r\t\u00e9\uD83D\udE00"`, `"\u"`, `"\u12"`, `"\u12g4"`,
	`"\x41"`, `"\'"`, `"\U0041"`, `"\a"`, `"\0"`, `"\`, `"abc`, `"abc\"`,
	"\"\x00\"", "\"\x1f\"", "\"\x7f\"", "\"\t\"", "\"\n\"", "\"\xff\xfe\"", "\"\xed\xa0\x80\"",
	"\"\xc3\"", `"` + strings.Repeat("abcdefg\\n", 20) + `"`,
	`[]`, `[ ]`, `[1]`, `[1,]`, `[,1]`, `[1 2]`, `[[]]`, `[[],[{}]]`, `[`, `]`, `[}`, `{]`,
	`{}`, `{ }`, `{"a":1}`, `{"a":1,}`, `{"a"}`, `{"a":}`, `{"a" 1}`, `{a:1}`, `{'a':1}`,
	`{"a":1,"a":2}`, `{"a":{"b":[1,{"c":null}]}}`, `{"a":1}}`, `{"a":1]`, `[1}`,
	`{"\u0061":1}`, `{"\x":1}`, "{\"\x01\":1}", `{1:1}`, `{"a":1 "b":2}`,
	" \t\n\r{} \t\n\r", "\v{}", "\f{}", "{}\u00a0", "\xef\xbb\xbf{}", "{}x", "{}{}", "[] []",
	"{}\x00", "1 2", "{\n" + strings.Repeat(" ", 21) + `"a"` + strings.Repeat(" \t\r\n", 5) + ":\n\n        1}",
	"{\n" + strings.Repeat(" ", 13) + "\v\"a\":1}", "[1" + strings.Repeat(" ", 17) + "\f]", "{}" + strings.Repeat(" ", 16) + "x", `"a" "b"`, `nullnull`, `truefalse`, `1true`, `-x`, `[-]`, `[1.]`,
}

// TestJScanValidity: skipping a value accepts exactly what json.Valid
// accepts.
func TestJScanValidity(t *testing.T) {
	for _, doc := range validityCases {
		if got, want := jscanValid([]byte(doc)), json.Valid([]byte(doc)); got != want {
			t.Errorf("jscan valid = %v, json.Valid = %v for %q", got, want, doc)
		}
	}
}

// TestJScanDepth: nesting is limited as encoding/json limits it, in arrays
// and objects alike.
func TestJScanDepth(t *testing.T) {
	for _, n := range []int{1, 63, 64, 65, maxDepth - 1, maxDepth, maxDepth + 1, 3 * maxDepth} {
		docs := map[string]string{
			"array":  strings.Repeat("[", n) + strings.Repeat("]", n),
			"object": strings.Repeat(`{"a":`, n-1) + "{}" + strings.Repeat("}", n-1),
			"mixed":  mixedNesting(n),
		}
		for name, doc := range docs {
			got, want := jscanValid([]byte(doc)), json.Valid([]byte(doc))
			if got != want {
				t.Errorf("%s nested %d deep: jscan valid = %v, json.Valid = %v", name, n, got, want)
			}
			if n > maxDepth && got {
				t.Errorf("%s nested %d deep: taken past the limit", name, n)
			}
		}
	}
}

// mixedNesting is a document of arrays and objects in turn, n deep.
func mixedNesting(n int) string {
	var open, close strings.Builder
	for i := range n {
		if i%2 == 0 {
			open.WriteString("[")
			close.WriteString("]")
		} else {
			open.WriteString(`{"a":`)
			close.WriteString("}")
		}
	}
	closing := []byte(close.String())
	slices.Reverse(closing)
	return open.String() + "1" + string(closing)
}

// FuzzJScanValid: on any input, jscan and json.Valid agree.
func FuzzJScanValid(f *testing.F) {
	for _, doc := range validityCases {
		f.Add([]byte(doc))
	}
	f.Add(fixture(f, "pull_request.opened.json"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		if got, want := jscanValid(doc), json.Valid(doc); got != want {
			t.Errorf("jscan valid = %v, json.Valid = %v", got, want)
		}
	})
}

// TestStringEnd: the eight-bytes-a-step search stops where a byte-by-byte
// one does, whatever the alignment.
func TestStringEnd(t *testing.T) {
	slow := func(b []byte, i int) int {
		for i < len(b) && b[i] != '"' && b[i] != '\\' && b[i] >= 0x20 {
			i++
		}
		return i
	}
	special := []byte{0, 0x01, 0x1f, 0x20, 0x21, '"', '\\', 0x7f, 0x80, 0x9f, 0xa0, 0xdc, 0xe2, 0xff, 'a', '0'}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			if rng.IntN(4) == 0 {
				b[i] = byte(rng.IntN(256))
			} else {
				b[i] = special[rng.IntN(len(special))]
			}
		}
		start := 0
		if len(b) > 0 {
			start = rng.IntN(len(b))
		}
		if got, want := stringEnd(b, start), slow(b, start); got != want {
			t.Fatalf("stringEnd(%q, %d) = %d, want %d", b, start, got, want)
		}
	}
}

// TestJScanWS: whitespace is skipped as a byte-by-byte loop skips it,
// whatever the runs and alignment.
func TestJScanWS(t *testing.T) {
	slow := func(b []byte, i int) int {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
			i++
		}
		return i
	}
	bytesOf := []byte{' ', ' ', ' ', ' ', '\t', '\n', '\r', '\v', '\f', 0, 'x', '"', 0xa0, 0x20 | 0x80}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = bytesOf[rng.IntN(len(bytesOf))]
			if rng.IntN(3) > 0 {
				b[i] = ' '
			}
		}
		start := 0
		if len(b) > 0 {
			start = rng.IntN(len(b))
		}
		s := &jscan{buf: b, pos: start}
		if s.ws(); s.pos != slow(b, start) {
			t.Fatalf("ws over %q from %d stopped at %d, want %d", b, start, s.pos, slow(b, start))
		}
	}
}

// TestJScanInteger: integers read as strconv.ParseInt reads them, and only
// plain ones in range are taken.
func TestJScanInteger(t *testing.T) {
	for _, in := range []string{
		"0", "-0", "7", "-7", "1234567890", "9223372036854775807", "-9223372036854775808",
		"9223372036854775808", "-9223372036854775809", "18446744073709551615",
		"18446744073709551616", "99999999999999999999", "1000000000000000000000",
		"1.0", "1e2", "-", "01", "",
	} {
		s := &jscan{buf: []byte(in)}
		got, ok := s.integer()
		ok = ok && s.pos == len(in) // "01" reads as 0, then 1 is left over
		want, err := strconv.ParseInt(in, 10, 64)
		plain := json.Valid([]byte(in)) && !strings.ContainsAny(in, ".eE")
		if wantOK := err == nil && plain; ok != wantOK || got != want && ok {
			t.Errorf("integer(%q) = %d, %v; want %d, %v", in, got, ok, want, wantOK)
		}
	}
}

// TestIndexFoldBytes: keys match ours as encoding/json matches names,
// including the non-ASCII letters that fold to ASCII ones.
func TestIndexFoldBytes(t *testing.T) {
	known := []string{"id", "login", "type", "sha", "full_name"}
	for _, key := range []string{
		"id", "ID", "Id", "iD", "login", "LOGIN", "type", "typ", "types", "sha", "SHA",
		"\u017fha", "\u017fHA", "full_name", "FULL_NAME", "full-name", "fullname", "full_nam\u212a",
		"\u212a", "k", "i\u0307d", "\u0130d", "\u0131d", "l\xffgin", "", "_", "@", "`",
		"full\x7fname",
	} {
		want := -1
		for i, k := range known {
			if bytes.EqualFold([]byte(k), []byte(key)) {
				want = i
				break
			}
		}
		if got := indexFoldBytes(known, []byte(key)); got != want {
			t.Errorf("indexFoldBytes(%q) = %d, want %d", key, got, want)
		}
	}
}

// BenchmarkJScanValid is the scan's floor: validating the payload and
// skipping all of it, beside json.Valid doing the same.
func BenchmarkJScanValid(b *testing.B) {
	body := benchPayload(b)
	for _, bc := range []struct {
		name  string
		valid func([]byte) bool
	}{{"jscan", jscanValid}, {"encoding-json", json.Valid}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if !bc.valid(body) {
					b.Fatal("payload not valid")
				}
			}
		})
	}
}
