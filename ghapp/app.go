package ghapp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v92/github"
)

// DefaultBaseURL is github.com's REST API.
const DefaultBaseURL = "https://api.github.com/"

// Defaults for the zero values of Options.
const (
	defaultMaxAttempts    = 5
	defaultMaxWait        = 2 * time.Minute
	defaultAttemptTimeout = 30 * time.Second
)

// Options configure an App. AppID and PrivateKeyPEM are required.
type Options struct {
	AppID         int64
	PrivateKeyPEM []byte
	// BaseURL is the REST API root: https://api.github.com/ or, for GitHub
	// Enterprise (and the fake in tests), https://HOST/api/v3/.
	BaseURL string
	// HTTPClient supplies the transport, redirect policy and cookie jar.
	// Its Timeout bounds each attempt, not a whole call with its retries.
	HTTPClient *http.Client
	Logger     *slog.Logger

	// MaxAttempts bounds how often one request is sent (default 5).
	MaxAttempts int
	// MaxWait is the longest rate-limit wait a request sits out (default
	// 2m); a longer one fails the call with a *RateLimitedError.
	MaxWait time.Duration
	// Sleep waits for d or until ctx ends; tests replace it to observe the
	// waits without spending them.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock rate-limit resets are measured against.
	Now func() time.Time
}

// App is the GitHub App: it signs App JWTs, caches installation tokens and
// holds the per-installation state (write lock, rate-limit pause) that
// every Client of an installation shares. It is safe for concurrent use.
type App struct {
	id      int64
	baseURL *url.URL
	http    *http.Client // the caller's client: transport, redirects, jar
	base    http.RoundTripper
	log     *slog.Logger
	policy  retryPolicy
	api     *github.Client // authenticated as the App (JWT)

	mu       sync.Mutex
	installs map[int64]*installation
}

// installation is what the App remembers about one installation.
type installation struct {
	id     int64
	writes semaphore // held for the whole of a write, retries included
	pause  pause     // rate-limit pause shared by all its requests

	minting semaphore // one token mint at a time
	mu      sync.Mutex
	token   Token // cached installation-wide token
}

// NewApp checks the options and builds the App. It makes no request.
func NewApp(opts Options) (*App, error) {
	if opts.AppID <= 0 {
		return nil, errors.New("ghapp: App id must be a positive number")
	}
	base, err := parseBaseURL(cmp.Or(opts.BaseURL, DefaultBaseURL))
	if err != nil {
		return nil, err
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	a := &App{
		id:       opts.AppID,
		baseURL:  base,
		http:     hc,
		base:     hc.Transport,
		log:      cmp.Or(opts.Logger, slog.New(slog.DiscardHandler)),
		installs: map[int64]*installation{},
	}
	if a.base == nil {
		a.base = http.DefaultTransport
	}
	a.policy = newRetryPolicy(opts, hc.Timeout, a.log)
	// ghinstallation parses the key; its message names the problem
	// without quoting the key.
	jwt, err := ghinstallation.NewAppsTransport(a.base, opts.AppID, opts.PrivateKeyPEM)
	if err != nil {
		return nil, fmt.Errorf("ghapp: App private key: %w", err)
	}
	jwt.BaseURL = strings.TrimSuffix(base.String(), "/")
	a.api, err = a.newGitHub(&retrying{policy: &a.policy, next: hostOnly(base, jwt, a.base)})
	if err != nil {
		return nil, err
	}
	return a, nil
}

func newRetryPolicy(opts Options, attemptTimeout time.Duration, log *slog.Logger) retryPolicy {
	p := retryPolicy{
		maxAttempts:    cmp.Or(opts.MaxAttempts, defaultMaxAttempts),
		maxWait:        cmp.Or(opts.MaxWait, defaultMaxWait),
		attemptTimeout: cmp.Or(attemptTimeout, defaultAttemptTimeout),
		sleep:          opts.Sleep,
		now:            opts.Now,
		log:            log,
	}
	if p.sleep == nil {
		p.sleep = sleepContext
	}
	if p.now == nil {
		p.now = time.Now
	}
	return p
}

// parseBaseURL accepts an absolute http(s) URL and gives it the trailing
// slash go-github resolves paths against.
func parseBaseURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("ghapp: base URL %q: want an absolute http(s) URL such as %s or https://HOST/api/v3/", s, DefaultBaseURL)
	}
	if u.User != nil {
		return nil, errors.New("ghapp: base URL must not carry credentials")
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	return u, nil
}

// newGitHub is a go-github client over rt. go-github's own rate-limit
// bookkeeping is off: it would refuse requests before they reach rt, which
// is where the waiting policy lives.
func (a *App) newGitHub(rt http.RoundTripper) (*github.Client, error) {
	// The attempt timeout is applied per attempt by retrying; a client-wide
	// one would also cut short the waits between attempts.
	hc := &http.Client{Transport: rt, CheckRedirect: a.http.CheckRedirect, Jar: a.http.Jar}
	base := a.baseURL.String()
	c, err := github.NewClient(
		github.WithHTTPClient(hc),
		github.WithURLs(&base, &base),
		github.WithUserAgent("kilroy-bot"),
		github.WithDisableRateLimitCheck(),
	)
	if err != nil {
		return nil, fmt.Errorf("ghapp: GitHub client: %w", err)
	}
	return c, nil
}

// state returns the installation's shared state, creating it on first use.
func (a *App) state(id int64) *installation {
	a.mu.Lock()
	defer a.mu.Unlock()
	in, ok := a.installs[id]
	if !ok {
		in = &installation{id: id, writes: newSemaphore(), minting: newSemaphore()}
		a.installs[id] = in
	}
	return in
}

// sleepContext waits for d or until ctx ends.
func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// semaphore is a lock whose acquisition gives up when the context ends.
type semaphore chan struct{}

func newSemaphore() semaphore { return make(semaphore, 1) }

func (s semaphore) acquire(ctx context.Context) error {
	select {
	case s <- struct{}{}:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (s semaphore) release() { <-s }
