package webhook

import (
	"fmt"
	"net/http"
	"sync/atomic"
)

// budget bounds the bytes that the bodies of all deliveries in flight hold
// together. Every body reserves what it has received plus the chunk it is
// about to read into before it reads; a reservation that would pass the
// limit is refused, and the delivery is answered 503. So an attacker who
// opens many connections, declares a large Content-Length and then sends
// nothing costs the server one chunk a connection, and at most limit bytes
// in all, whatever the declared lengths.
type budget struct {
	limit int64
	used  atomic.Int64
}

// take reserves n bytes; it reports false, reserving nothing, when that
// would pass the limit.
func (b *budget) take(n int64) bool {
	for {
		used := b.used.Load()
		if used+n > b.limit {
			return false
		}
		if b.used.CompareAndSwap(used, used+n) {
			return true
		}
	}
}

// give returns n bytes taken earlier.
func (b *budget) give(n int64) { b.used.Add(-n) }

// inUse is the number of bytes reserved now.
func (b *budget) inUse() int64 { return b.used.Load() }

// BodyBytesInFlight is the number of bytes the bodies in flight hold of
// the budget now, for a metric.
func (h *Handler) BodyBytesInFlight() int64 { return h.budget.inUse() }

// overBudget is the 503 of a delivery whose body did not fit in the budget.
// It wraps ErrUnavailable: the server is busy, not broken.
func overBudget(limit int64) error {
	return &statusError{
		code:  http.StatusServiceUnavailable,
		msg:   "too many delivery bodies in flight; redeliver it later",
		cause: fmt.Errorf("%w: the %d-byte budget for bodies in flight is used up", ErrUnavailable, limit),
	}
}
