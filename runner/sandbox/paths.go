package sandbox

import (
	"os"
	"sync"
	"time"
)

// pathTTL is how long a Sandbox trusts what it learnt about a host path.
const pathTTL = 5 * time.Second

// pathCache remembers for a few seconds how the host paths a jail shows
// resolve: their canonical form and whether they exist. Resolving the two
// dozen paths of a jail (every PATH entry, toolchain and cache, each
// component through lstat) would otherwise cost more system calls than
// the rest of a start. A bind planned from this knowledge is a "-try"
// bind, so a directory that vanished since is skipped, not an error; one
// that appeared is shown from the next resolution on.
type pathCache struct {
	ttl time.Duration
	mu  sync.Mutex
	m   map[string]pathInfo
}

type pathInfo struct {
	canon  string // canonical(p)
	exists bool   // canon exists and is not "/"
	at     time.Time
}

func newPathCache(ttl time.Duration) *pathCache {
	return &pathCache{ttl: ttl, m: map[string]pathInfo{}}
}

// resolve returns what is known of absolute path p, looking it up when
// the cache holds nothing recent about it.
func (c *pathCache) resolve(p string) pathInfo {
	now := time.Now()
	c.mu.Lock()
	info, ok := c.m[p]
	c.mu.Unlock()
	if ok && now.Sub(info.at) < c.ttl {
		return info
	}
	return c.refresh(p, now)
}

// refresh looks p up now, whatever the cache holds.
func (c *pathCache) refresh(p string, now time.Time) pathInfo {
	info := pathInfo{canon: canonical(p), at: now}
	if _, err := os.Stat(info.canon); err == nil && info.canon != "/" {
		info.exists = true
	}
	c.mu.Lock()
	c.m[p] = info
	c.mu.Unlock()
	return info
}
