package ghapp

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"time"
)

// Backoff between attempts after a 5xx or a connection error.
const (
	backoffBase = 500 * time.Millisecond
	backoffCap  = 30 * time.Second
)

// retryPolicy is the App's retry and waiting policy, shared by all its
// transports.
type retryPolicy struct {
	maxAttempts    int
	maxWait        time.Duration
	attemptTimeout time.Duration
	sleep          func(context.Context, time.Duration) error
	now            func() time.Time
	log            *slog.Logger
}

// backoff is the wait before attempt+1: exponential, capped, with jitter
// in its upper half so that many clients do not retry in step.
func (p *retryPolicy) backoff(attempt int) time.Duration {
	d := min(backoffBase<<min(attempt-1, 16), backoffCap)
	return d/2 + rand.N(d/2+1)
}

type ctxKey int

const repeatableKey ctxKey = iota

// repeatable marks requests made with ctx as safe to send again after an
// ambiguous failure (5xx, connection error) even when they are POSTs:
// for operations whose repetition GitHub makes harmless.
func repeatable(ctx context.Context) context.Context {
	return context.WithValue(ctx, repeatableKey, true)
}

// safeToRepeat reports whether req may be sent again after a failure that
// may have happened after GitHub acted on it. Every method but POST is
// idempotent on the endpoints the bot uses (a check-run PATCH sets fields;
// its annotations could repeat, which is the lesser harm than losing them).
func safeToRepeat(req *http.Request) bool {
	return req.Method != http.MethodPost || req.Context().Value(repeatableKey) != nil
}

func isWrite(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// retryableStatus is a server-side failure worth another attempt.
func retryableStatus(code int) bool {
	switch code {
	case http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// retrying is the transport below go-github that retries, waits out rate
// limits and serialises an installation's writes. A write holds the
// installation's lock through its retries and rate-limit waits: the other
// writes queue behind it, which is the pacing GitHub asks for anyway.
type retrying struct {
	policy *retryPolicy
	inst   *installation // nil for App-level requests: no lock, own pause
	next   http.RoundTripper
}

func (t *retrying) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	if replayable && req.Body != nil {
		// Every attempt gets a fresh body from GetBody.
		req.Body.Close()
	}
	if t.inst != nil && isWrite(req.Method) {
		if err := t.inst.writes.acquire(ctx); err != nil {
			if !replayable {
				req.Body.Close()
			}
			return nil, err
		}
		defer t.inst.writes.release()
	}
	p := &pause{}
	if t.inst != nil {
		p = &t.inst.pause
	}
	secondaryHits := 0
	for attempt := 1; ; attempt++ {
		if until := p.get(); once(req) && until.After(t.policy.now()) {
			if !replayable {
				req.Body.Close()
			}
			return pausedResponse(req, until, t.policy.now()), nil
		}
		if err := t.awaitPause(ctx, p); err != nil {
			return nil, err
		}
		resp, err := t.send(req, replayable)
		more := replayable && attempt < t.policy.maxAttempts && !once(req)
		if err != nil {
			var own *Error // a token that could not be had: retried already
			if ctx.Err() != nil || !more || !safeToRepeat(req) || errors.As(err, &own) {
				return nil, err
			}
			if err := t.wait(ctx, req, attempt, t.policy.backoff(attempt), "error", err.Error()); err != nil {
				return nil, err
			}
			continue
		}
		now := t.policy.now()
		if reset, ok := exhausted(resp); ok {
			p.extend(reset)
		}
		if lim, ok := rateLimit(resp, now, secondaryHits); ok {
			// GitHub refused without acting: safe to repeat any method.
			if !more || lim.until.Sub(now) > t.policy.maxWait {
				return resp, nil // go-github turns it into a rate-limit error
			}
			if lim.secondary {
				secondaryHits++
			}
			p.extend(lim.until)
			discard(resp)
			t.policy.log.LogAttrs(ctx, slog.LevelWarn, "github: rate limited, waiting",
				slog.String("method", req.Method), slog.String("path", req.URL.Path),
				slog.Int("status", resp.StatusCode), slog.Bool("secondary", lim.secondary),
				slog.Duration("wait", lim.until.Sub(now)))
			continue
		}
		if !retryableStatus(resp.StatusCode) || !more || !safeToRepeat(req) {
			return resp, nil
		}
		d := t.policy.backoff(attempt)
		if ra, ok := retryAfter(resp.Header, now); ok && ra > d && ra <= t.policy.maxWait {
			d = ra
		}
		discard(resp)
		if err := t.wait(ctx, req, attempt, d, "status", http.StatusText(resp.StatusCode)); err != nil {
			return nil, err
		}
	}
}

// wait logs a retry and sleeps before it.
func (t *retrying) wait(ctx context.Context, req *http.Request, attempt int, d time.Duration, key, why string) error {
	t.policy.log.LogAttrs(ctx, slog.LevelWarn, "github: retrying",
		slog.String("method", req.Method), slog.String("path", req.URL.Path),
		slog.String(key, why), slog.Int("attempt", attempt), slog.Duration("wait", d))
	return t.policy.sleep(ctx, d)
}

// awaitPause sits out the rate-limit pause, unless it is longer than the
// policy allows: then the request goes out and GitHub's refusal is the
// caller's answer.
func (t *retrying) awaitPause(ctx context.Context, p *pause) error {
	d := p.get().Sub(t.policy.now())
	if d <= 0 || d > t.policy.maxWait {
		return nil
	}
	return t.policy.sleep(ctx, d)
}

// send makes one attempt, bounded by the attempt timeout. The timeout
// ends when the caller closes the response body.
func (t *retrying) send(req *http.Request, replayable bool) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(req.Context(), t.policy.attemptTimeout)
	r := req.Clone(ctx)
	if replayable && req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			cancel()
			return nil, err
		}
		r.Body = body
	}
	resp, err := t.next.RoundTrip(r)
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelOnClose ends an attempt's context when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// discard drains a little of a response that will not be used, so the
// connection can be reused, and closes it.
func discard(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, peekLimit))
	resp.Body.Close()
}
