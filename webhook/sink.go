package webhook

import (
	"context"
	"errors"
)

// Sink durably accepts the events the webhook extracted. It is implemented on
// top of the job queue.
type Sink interface {
	// Accept must, before it returns nil, record d.ID and enqueue the work
	// for ev in one transaction, so that a 202 means the delivery survives a
	// crash. A delivery id it has seen before is not enqueued again: Accept
	// returns Accepted{Duplicate: true} and a nil error. Any error means the
	// delivery was not stored; the webhook answers 503 so that it can be
	// redelivered. Wrap ErrUnavailable when the store is down or full.
	Accept(ctx context.Context, d Delivery, ev Event) (Accepted, error)
}

// Accepted is a Sink's answer for a stored delivery.
type Accepted struct {
	// Duplicate reports a redelivery of an id already stored; nothing new
	// was enqueued.
	Duplicate bool
	// Job optionally names what was enqueued (a job or run id); it is echoed
	// in the response body for whoever reads the delivery log.
	Job string
}

// ErrUnavailable marks a Sink failure because the queue cannot take work right
// now (database down, queue full). The webhook answers 503 for any Sink error;
// this one is logged as a warning rather than an internal error.
var ErrUnavailable = errors.New("webhook: queue unavailable")
