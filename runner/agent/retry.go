package agent

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// retrying retries a Provider's retryable failures with exponential
// backoff: base, 2·base, … capped at maxWait; a Retry-After within maxWait
// is honoured instead. The SDKs' own retries are off, so this is the one
// retry policy for every provider and it is bounded by attempts.
type retrying struct {
	p       Provider
	retries int
	base    time.Duration
	maxWait time.Duration
	log     *slog.Logger
}

func (r retrying) Complete(ctx context.Context, req Request) (Response, error) {
	wait := r.base
	for attempt := 0; ; attempt++ {
		resp, err := r.p.Complete(ctx, req)
		var pe *ProviderError
		if err == nil || !errors.As(err, &pe) {
			return resp, err
		}
		pe.Attempts = attempt + 1
		if !pe.retryable() || attempt >= r.retries || ctx.Err() != nil {
			return resp, err
		}
		d := min(wait, r.maxWait)
		if pe.RetryAfter > 0 && pe.RetryAfter <= r.maxWait {
			d = pe.RetryAfter
		}
		r.log.WarnContext(ctx, "provider call failed, retrying", "status", pe.Status, "attempt", attempt+1, "wait", d)
		if err := sleep(ctx, d); err != nil {
			return Response{}, err
		}
		wait *= 2
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
