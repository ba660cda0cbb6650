package attractor

import (
	"fmt"
	"math"
	"time"
)

// durationFix is the fix hint for any bad duration.
const durationFix = "write a duration like 900s, 15m, 2h, 250ms or 1d (units ms, s, m, h, d; combine as 1h30m)"

// ParseDuration parses an Attractor duration: one or more
// number+unit groups with units ms, s, m, h and d (1d = 24h), as in
// "900s", "250ms", "1d", "1h30m" or "1.5h". Go's ns and us are not
// accepted: no pipeline step is that short and a typo should not pass.
// "0" alone is zero.
func ParseDuration(s string) (time.Duration, error) {
	if s == "0" {
		return 0, nil
	}
	if s == "" {
		return 0, fmt.Errorf("empty duration")
	}
	var total float64
	for i := 0; i < len(s); {
		num, n := leadingNumber(s[i:])
		if n == 0 {
			return 0, fmt.Errorf("invalid duration %q: expected a number at %q", s, s[i:])
		}
		i += n
		unit, n := durationUnit(s[i:])
		if n == 0 {
			if i == len(s) {
				return 0, fmt.Errorf("invalid duration %q: missing unit", s)
			}
			return 0, fmt.Errorf("invalid duration %q: unknown unit at %q", s, s[i:])
		}
		i += n
		total += num * float64(unit)
	}
	if total >= math.MaxInt64 {
		return 0, fmt.Errorf("invalid duration %q: too long", s)
	}
	return time.Duration(total), nil
}

// leadingNumber reads digits with an optional fraction from the start of
// s and returns the value and the bytes read (0 when s starts otherwise).
func leadingNumber(s string) (float64, int) {
	var v float64
	i := 0
	for i < len(s) && isDigit(s[i]) {
		v = v*10 + float64(s[i]-'0')
		i++
	}
	if i == 0 {
		return 0, 0
	}
	if i < len(s) && s[i] == '.' {
		scale := 0.1
		j := i + 1
		for j < len(s) && isDigit(s[j]) {
			v += float64(s[j]-'0') * scale
			scale /= 10
			j++
		}
		if j == i+1 {
			return 0, 0 // "1." is not a number here
		}
		i = j
	}
	return v, i
}

// durationUnit reads a unit from the start of s. "ms" is tried before "m"
// so that 250ms is not read as 250 minutes followed by junk.
func durationUnit(s string) (time.Duration, int) {
	if len(s) >= 2 && s[:2] == "ms" {
		return time.Millisecond, 2
	}
	if s == "" {
		return 0, 0
	}
	switch s[0] {
	case 's':
		return time.Second, 1
	case 'm':
		return time.Minute, 1
	case 'h':
		return time.Hour, 1
	case 'd':
		return 24 * time.Hour, 1
	}
	return 0, 0
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
