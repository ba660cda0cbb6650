package ghapp

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Rate-limit constants from GitHub's REST guidance.
const (
	// secondaryDefaultWait is GitHub's advice when a secondary limit names
	// no Retry-After: wait at least a minute, longer on each repeat.
	secondaryDefaultWait = time.Minute
	// resetSlack covers clock skew and x-ratelimit-reset's whole seconds.
	resetSlack = time.Second
	// peekLimit bounds how much of an error body is read to recognise a
	// secondary rate limit.
	peekLimit = 64 << 10
)

// limit is a rate limit GitHub reported: come back at until.
type limit struct {
	until     time.Time
	secondary bool
}

// rateLimit recognises a rate-limited response. hits counts earlier
// secondary limits on the same request, for GitHub's growing waits.
func rateLimit(resp *http.Response, now time.Time, hits int) (limit, bool) {
	if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusTooManyRequests {
		return limit{}, false
	}
	if resp.Header.Get("X-Ratelimit-Remaining") == "0" {
		return limit{until: primaryReset(resp.Header, now)}, true
	}
	if d, ok := retryAfter(resp.Header, now); ok {
		return limit{until: now.Add(d), secondary: true}, true
	}
	// A 429 is always a limit; a bare 403 only when GitHub's message says so,
	// since a 403 is also a plain "no permission".
	if resp.StatusCode == http.StatusTooManyRequests || mentionsSecondaryLimit(resp) {
		return limit{until: now.Add(secondaryDefaultWait << min(hits, 5)), secondary: true}, true
	}
	return limit{}, false
}

// primaryReset is when the primary limit resets, from x-ratelimit-reset
// (Unix seconds); without it, a minute from now.
func primaryReset(h http.Header, now time.Time) time.Time {
	if n, err := strconv.ParseInt(h.Get("X-Ratelimit-Reset"), 10, 64); err == nil {
		return time.Unix(n, 0).Add(resetSlack)
	}
	return now.Add(time.Minute)
}

// retryAfter reads Retry-After as seconds or as an HTTP date.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// mentionsSecondaryLimit reads the start of the body (restoring it for
// go-github) and looks for GitHub's secondary-limit wording.
func mentionsSecondaryLimit(resp *http.Response) bool {
	if resp.Body == nil {
		return false
	}
	head, err := io.ReadAll(io.LimitReader(resp.Body, peekLimit))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	if err != nil {
		return false
	}
	s := strings.ToLower(string(head))
	return strings.Contains(s, "secondary rate limit") || strings.Contains(s, "secondary-rate-limits") ||
		strings.Contains(s, "abuse")
}

// exhausted reports the reset of a successful response that used the last
// request of the primary limit, so the next request waits instead of
// being refused.
func exhausted(resp *http.Response) (time.Time, bool) {
	if resp.StatusCode >= 300 || resp.Header.Get("X-Ratelimit-Remaining") != "0" {
		return time.Time{}, false
	}
	n, err := strconv.ParseInt(resp.Header.Get("X-Ratelimit-Reset"), 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(n, 0).Add(resetSlack), true
}

// pause is the moment an installation may send again after a rate limit;
// all of its requests wait for it.
type pause struct {
	mu    sync.Mutex
	until time.Time
}

func (p *pause) extend(t time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t.After(p.until) {
		p.until = t
	}
}

func (p *pause) get() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.until
}
