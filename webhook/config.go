package webhook

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Defaults of Config.
const (
	// DefaultMaxBody is GitHub's own cap on a delivery's payload.
	DefaultMaxBody = 25 << 20
	// DefaultBodyBudget bounds the bytes all bodies in flight hold
	// together: two deliveries of the largest size, or thousands of the
	// usual 30 KB ones.
	DefaultBodyBudget = 64 << 20
	// DefaultAcceptTimeout bounds a Sink call; GitHub gives up on a delivery
	// after 10 s.
	DefaultAcceptTimeout = 5 * time.Second
)

// Config is the webhook's part of the server configuration.
type Config struct {
	// Secrets verify signatures; a delivery signed with any of them is
	// accepted, so a secret can be rotated by configuring the old and the
	// new one until GitHub uses only the new. At least one, none empty.
	Secrets [][]byte
	// AppID, when set, ignores check_run and check_suite deliveries for
	// check runs and suites of another App.
	AppID int64
	// AppSlug, when set, ignores comments the App posted on a user's behalf
	// (performed_via_github_app). Comments by any bot account, the App's own
	// "<slug>[bot]" included, are ignored regardless.
	AppSlug string
	// MaxBody caps the request body in bytes; DefaultMaxBody when zero.
	MaxBody int64
	// BodyBudget caps the bytes that the bodies of all deliveries in
	// flight hold together (each reserves what it has received plus one
	// 16 KiB read ahead); a delivery past it is answered 503.
	// DefaultBodyBudget when zero; never less than MaxBody.
	BodyBudget int64
	// AcceptTimeout bounds the Sink call; DefaultAcceptTimeout when zero.
	AcceptTimeout time.Duration
	// Logger receives one line per delivery; nothing is logged when nil.
	Logger *slog.Logger
}

// withDefaults validates c and fills in its defaults.
func (c Config) withDefaults() (Config, error) {
	if len(c.Secrets) == 0 {
		return c, errors.New("webhook: no webhook secret configured")
	}
	for i, s := range c.Secrets {
		if len(s) == 0 {
			return c, fmt.Errorf("webhook: webhook secret %d is empty", i+1)
		}
	}
	if c.MaxBody < 0 || c.BodyBudget < 0 || c.AcceptTimeout < 0 {
		return c, fmt.Errorf("webhook: negative limit (max body %d, body budget %d, accept timeout %v)",
			c.MaxBody, c.BodyBudget, c.AcceptTimeout)
	}
	if c.MaxBody == 0 {
		c.MaxBody = DefaultMaxBody
	}
	if c.BodyBudget == 0 {
		c.BodyBudget = max(DefaultBodyBudget, c.MaxBody+bodyChunk)
	}
	if c.BodyBudget < c.MaxBody+1 {
		return c, fmt.Errorf("webhook: the body budget (%d bytes) must hold one body of the maximum size (%d bytes)",
			c.BodyBudget, c.MaxBody)
	}
	if c.AcceptTimeout == 0 {
		c.AcceptTimeout = DefaultAcceptTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}
