package dot

// value scans the token after "=". ok is false when the next byte cannot
// start a value; the parser then reports the missing value with whatever
// token is there.
func (l *lexer) value(start Pos) (tok token, ok bool, err error) {
	c := l.src[l.off]
	switch {
	case c == '"':
		tok, err = l.str(tValue, start)
		return tok, true, err
	case c == '<':
		return token{}, true, errorf(start, htmlHint)
	case !isIdentChar(c) && c != '-' && c != '.':
		return token{}, false, nil
	}
	end := l.scanValue(l.off)
	if end == l.off { // "->" right after "="
		return token{}, false, nil
	}
	tok = l.emit(tValue, start, end)
	tok.vkind, ok = classify(tok.raw)
	if !ok {
		return token{}, true, errorf(start, "invalid value %q: numbers look like 42, -1 or 0.5, durations like 900s, 250ms or 2h; quote any other text", tok.raw)
	}
	return tok, true, nil
}

// scanValue returns the end of a bare value starting at i: identifier
// characters plus . : - and /. A slash does not continue the value when it
// starts a comment (// or /*), and "-" does not when it starts "->".
func (l *lexer) scanValue(i int) int {
	for ; i < len(l.src); i++ {
		c, next := l.src[i], byte(0)
		if i+1 < len(l.src) {
			next = l.src[i+1]
		}
		switch {
		case isIdentChar(c) || c == '.' || c == ':':
		case c == '-' && next != '>':
		case c == '/' && next != '/' && next != '*':
		default:
			return i
		}
	}
	return i
}

// classify says what kind of bare value s is. Values starting with a
// letter or "_" are booleans or bare values; anything else must be a
// number or a duration.
func classify(s string) (ValueKind, bool) {
	switch {
	case s == "true" || s == "false":
		return BoolValue, true
	case isIdentStart(s[0]):
		return BareValue, true
	case isNumber(s):
		return NumberValue, true
	case isDuration(s):
		return DurationValue, true
	}
	return 0, false
}

// isNumber matches -?[0-9]+ and -?[0-9]*\.[0-9]+.
func isNumber(s string) bool {
	if s != "" && s[0] == '-' {
		s = s[1:]
	}
	intPart := digits(s)
	s = s[intPart:]
	if s == "" {
		return intPart > 0
	}
	return s[0] == '.' && len(s) > 1 && digits(s[1:]) == len(s)-1
}

// isDuration matches [0-9]+(ms|s|m|h|d).
func isDuration(s string) bool {
	n := digits(s)
	if n == 0 {
		return false
	}
	switch s[n:] {
	case "ms", "s", "m", "h", "d":
		return true
	}
	return false
}

// digits counts the leading ASCII digits of s.
func digits(s string) int {
	n := 0
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	return n
}
