package webhook

import (
	"encoding/binary"
	"math"
	"math/bits"
	"strings"
)

// jscan is a single-pass JSON scanner over a payload's bytes, for the
// pull_request fast path (see scan.go). It checks every byte against
// encoding/json's grammar, descends only into the objects its caller asks
// for and skips everything else without building anything. Every method
// returns false on doubt: invalid JSON, or a value encoding/json might read
// differently. The scan then stops and encoding/json decides.
type jscan struct {
	buf   []byte
	pos   int // next unread byte
	depth int // objects and arrays open around pos
	// objects has bit d set when the container at depth d is an object:
	// skipping keeps its own stack so that deep nesting cannot recurse.
	objects [maxDepth/64 + 1]uint64
}

// maxDepth is encoding/json's nesting limit: it rejects deeper documents,
// so they are a doubt here too.
const maxDepth = 10000

// document reads the whole payload with value, allowing only whitespace
// around it: encoding/json rejects anything after the value.
func (s *jscan) document(value func() bool) bool {
	s.ws()
	if !value() {
		return false
	}
	s.ws()
	return s.pos == len(s.buf)
}

// The hot loops below work on a local index into the bytes rather than on
// s.pos, which keeps it in a register: each returns the index past what it
// read, or -1 if that is not valid JSON.

// ws skips whitespace.
func (s *jscan) ws() { s.pos = wsEnd(s.buf, s.pos) }

// wsEnd is the index of the first byte at or after i that is not JSON
// whitespace, which is only these four bytes. Indented payloads have a
// newline and a run of spaces before each key: the spaces of a run are
// counted eight bytes at a time.
func wsEnd(b []byte, i int) int {
	if i < len(b) && b[i] > ' ' {
		return i // mostly, there is none
	}
	for i+8 <= len(b) {
		nonSpace := binary.LittleEndian.Uint64(b[i:]) ^ (ones * ' ')
		if nonSpace == 0 {
			i += 8
			continue
		}
		i += bits.TrailingZeros64(nonSpace) / 8 // past the spaces first in line
		if !isSpace[b[i]] {
			return i
		}
		i++ // a tab, newline or carriage return
	}
	for i < len(b) && isSpace[b[i]] {
		i++
	}
	return i
}

// peek is the byte at pos, or 0 at the end (0 starts no JSON token).
func (s *jscan) peek() byte {
	if s.pos < len(s.buf) {
		return s.buf[s.pos]
	}
	return 0
}

// literal moves past lit (true, false or null) if it is next.
func (s *jscan) literal(lit string) bool {
	return s.advance(literalAfter(s.buf, s.pos, lit))
}

// advance moves to i, the result of one of the index loops, if it is not -1.
func (s *jscan) advance(i int) bool {
	if i < 0 {
		return false
	}
	s.pos = i
	return true
}

func literalAfter(b []byte, i int, lit string) int {
	end := i + len(lit)
	if end > len(b) || string(b[i:end]) != lit {
		return -1
	}
	return end
}

// null moves past a null if one is next: encoding/json leaves a field alone
// for null, but sets a pointer to nil.
func (s *jscan) null() bool {
	return s.peek() == 'n' && s.literal("null")
}

// members reads the object at pos (null: nothing, as encoding/json leaves a
// struct alone), calling member for each key that is one of known and
// skipping the others. A key that is not one of known must not match one but
// for case (encoding/json would take it), and no known key may come twice
// (encoding/json would take the last, merging objects). A key with escapes
// is a doubt: it could spell one of ours.
func (s *jscan) members(known []string, member func(key string) bool) bool {
	if s.null() {
		return true
	}
	if s.peek() != '{' || !s.open(true) {
		return false
	}
	b, i := s.buf, wsEnd(s.buf, s.pos)
	if i < len(b) && b[i] == '}' {
		s.pos = i
		return s.close()
	}
	var seen uint64
	for {
		key, end := plainStringAt(b, i)
		if end < 0 {
			return false
		}
		if i = colonAfter(b, end); i < 0 {
			return false
		}
		switch k := indexFoldBytes(known, key); {
		case k >= 0 && (known[k] != string(key) || seen&(1<<k) != 0):
			return false
		case k >= 0:
			seen |= 1 << k
			s.pos = i
			if !member(known[k]) {
				return false
			}
			i = s.pos
		default:
			s.pos = i
			if !s.skipValue() {
				return false
			}
			i = s.pos
		}
		if i = wsEnd(b, i); i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = wsEnd(b, i+1)
		case '}':
			s.pos = i
			return s.close()
		default:
			return false
		}
	}
}

// open moves past the '{' or '[' at pos, one level deeper.
func (s *jscan) open(object bool) bool {
	if s.depth >= maxDepth {
		return false
	}
	s.pos++
	s.depth++
	s.setKind(s.depth, object)
	return true
}

// close moves past the '}' or ']' at pos, one level up. It cannot fail;
// it returns true to end a successful read.
func (s *jscan) close() bool {
	s.pos++
	s.depth--
	return true
}

// setKind records whether the container at depth is an object.
func (s *jscan) setKind(depth int, object bool) {
	w, bit := depth/64, uint64(1)<<(depth%64)
	if object {
		s.objects[w] |= bit
	} else {
		s.objects[w] &^= bit
	}
}

// isObject reports whether the container at depth is an object.
func (s *jscan) isObject(depth int) bool {
	return s.objects[depth/64]&(1<<(depth%64)) != 0
}

// colonAfter reads the ':' after a key and the whitespace around it.
func colonAfter(b []byte, i int) int {
	if i = wsEnd(b, i); i >= len(b) || b[i] != ':' {
		return -1
	}
	return wsEnd(b, i+1)
}

// keyAfter reads a key that is not one we read, and its colon.
func keyAfter(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i = stringAfter(b, i); i < 0 {
		return -1
	}
	return colonAfter(b, i)
}

// skipValue moves past the value at pos, checking it is valid JSON.
func (s *jscan) skipValue() bool {
	if c := s.peek(); c == '{' || c == '[' {
		return s.skipNested()
	}
	return s.advance(scalarAfter(s.buf, s.pos))
}

// scalarAfter reads the string, number or literal at i.
func scalarAfter(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return stringAfter(b, i)
	case 't':
		return literalAfter(b, i, "true")
	case 'f':
		return literalAfter(b, i, "false")
	case 'n':
		return literalAfter(b, i, "null")
	}
	end, _ := numberAfter(b, i)
	return end
}

// skipNested moves past the object or array at pos and all it holds. It
// loops rather than recurses, keeping the kind of each open container in
// s.objects, so a deeply nested payload costs no stack.
func (s *jscan) skipNested() bool {
	b, i, base := s.buf, s.pos, s.depth
	depth := base
	for {
		// A value starts at i.
		if c := b[i]; c == '{' || c == '[' {
			if depth >= maxDepth {
				return false
			}
			depth++
			s.setKind(depth, c == '{')
			if i = wsEnd(b, i+1); i < len(b) && b[i] == c+2 { // '}' and ']' follow their openers by two
				i++
				depth--
			} else {
				if c == '{' {
					i = keyAfter(b, i)
				}
				if i < 0 || i >= len(b) {
					return false
				}
				continue
			}
		} else if i = scalarAfter(b, i); i < 0 {
			return false
		}
		// A value ended: close containers until a comma starts another.
		for {
			if depth == base {
				s.pos = i
				return true
			}
			if i = wsEnd(b, i); i >= len(b) {
				return false
			}
			obj := s.isObject(depth)
			if c := b[i]; c == ',' {
				i = wsEnd(b, i+1)
				if obj {
					i = keyAfter(b, i)
				}
				if i < 0 || i >= len(b) {
					return false
				}
				break
			} else if c == '}' && obj || c == ']' && !obj {
				i++
				depth--
			} else {
				return false
			}
		}
	}
}

// number moves past the number at pos; plain reports it had neither a
// fraction nor an exponent.
func (s *jscan) number() (plain, ok bool) {
	end, plain := numberAfter(s.buf, s.pos)
	return plain, s.advance(end)
}

// numberAfter reads a number by JSON's grammar: an optional minus, 0 or
// digits not starting with 0, then optionally a fraction and an exponent.
func numberAfter(b []byte, i int) (end int, plain bool) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return -1, false
	}
	plain = true
	if i < len(b) && b[i] == '.' {
		plain = false
		if j := digits(b, i+1); j > i+1 {
			i = j
		} else {
			return -1, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		plain = false
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if j := digits(b, i); j > i {
			i = j
		} else {
			return -1, false
		}
	}
	return i, plain
}

// digits is the index of the first non-digit in b at or after i.
func digits(b []byte, i int) int {
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// integer reads the plain integer at pos as encoding/json does into an
// int64 (strconv.ParseInt), without allocating; a fraction, an exponent or
// an overflow is a doubt.
func (s *jscan) integer() (int64, bool) {
	start := s.pos
	plain, ok := s.number()
	if !ok || !plain {
		return 0, false
	}
	b := s.buf[start:s.pos]
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) > 19 { // 20 digits exceed any int64
		return 0, false
	}
	var n uint64 // 19 digits fit
	for _, c := range b {
		n = n*10 + uint64(c-'0')
	}
	switch {
	case neg && n <= 1<<63:
		return int64(-n), true // -(1<<63) wraps to itself, MinInt64
	case !neg && n <= math.MaxInt64:
		return int64(n), true
	}
	return 0, false
}

// plainString reads the string at pos if it has no escapes, returning its
// bytes in place. A string with escapes is a doubt: as a key it could spell
// one of ours, and as a value it needs decoding.
func (s *jscan) plainString() ([]byte, bool) {
	str, end := plainStringAt(s.buf, s.pos)
	return str, s.advance(end)
}

func plainStringAt(b []byte, i int) (str []byte, end int) {
	if i >= len(b) || b[i] != '"' {
		return nil, -1
	}
	start := i + 1
	if i = stringEnd(b, start); i >= len(b) || b[i] != '"' {
		return nil, -1
	}
	return b[start:i], i + 1
}

// stringAfter reads the string whose opening quote is at i, which need
// only be one that encoding/json accepts: no raw control bytes and only
// JSON's escapes. Invalid UTF-8 is fine, as encoding/json replaces it.
func stringAfter(b []byte, i int) int {
	i++
	for {
		if i = stringEnd(b, i); i >= len(b) {
			return -1
		}
		switch b[i] {
		case '"':
			return i + 1
		case '\\':
			n := escapeLen(b[i:])
			if n == 0 {
				return -1
			}
			i += n
		default: // a control byte
			return -1
		}
	}
}

// escapeLen is the length of the escape that starts b (at its '\\'), or 0
// if encoding/json rejects it.
func escapeLen(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(b) < 6 {
			return 0
		}
		for _, c := range b[2:6] {
			if !isHex[c] {
				return 0
			}
		}
		return 6
	}
	return 0
}

// stringEnd is the index at or after i of the first byte that ends the
// plain run of a string: a quote, a backslash or a control byte (len(b) if
// none). It looks at eight bytes a step while they are all plain, as most
// of a payload is strings.
func stringEnd(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		if m := stopMask(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for i < len(b) && !isStop[b[i]] {
		i++
	}
	return i
}

// stopMask has the high bit set in each byte of w that is '"', '\\' or
// below 0x20, and possibly in bytes after the first such one (borrows run
// upward), never before it: only its lowest set bit is exact, which is the
// one stringEnd uses.
func stopMask(w uint64) uint64 {
	return (zeroBytes(w^(ones*'"')) | zeroBytes(w^(ones*'\\')) | (w-ones*0x20)&^w) & highs
}

// zeroBytes flags the zero bytes of w in the manner of stopMask.
func zeroBytes(w uint64) uint64 { return (w - ones) &^ w }

const ones, highs = 0x0101010101010101, 0x8080808080808080

// indexFoldBytes is the index in known of a key equal to key but for case,
// as encoding/json compares names (bytes.EqualFold); -1 if none.
func indexFoldBytes(known []string, key []byte) int {
	for i, k := range known {
		if len(k) == len(key) && asciiEqualFold(k, key) {
			return i
		}
	}
	if isASCII(key) {
		return -1
	}
	// A few non-ASCII letters fold to ASCII ones (K, the Kelvin sign, to k).
	for i, k := range known {
		if strings.EqualFold(k, string(key)) {
			return i
		}
	}
	return -1
}

// asciiEqualFold reports whether k and key, of one length, are equal but
// for the case of ASCII letters.
func asciiEqualFold(k string, key []byte) bool {
	for i := range len(k) {
		a, b := k[i], key[i]
		if a == b {
			continue
		}
		if a|0x20 != b|0x20 || a|0x20 < 'a' || a|0x20 > 'z' {
			return false
		}
	}
	return true
}

func isASCII(b []byte) bool {
	for ; len(b) >= 8; b = b[8:] {
		if binary.LittleEndian.Uint64(b)&highs != 0 {
			return false
		}
	}
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

var isSpace, isStop, isHex [256]bool

func init() {
	for _, c := range []byte(" \t\n\r") {
		isSpace[c] = true
	}
	for c := range 0x20 {
		isStop[c] = true
	}
	isStop['"'], isStop['\\'] = true, true
	for _, c := range []byte("0123456789abcdefABCDEF") {
		isHex[c] = true
	}
}
