package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"
)

// eventQueueName is River's queue for event jobs. Events get their own
// workers so that a burst of deliveries is decided while every run worker
// is busy with an hour-long pipeline.
const eventQueueName = "kilroy_events"

// eventAttempts is how often an event job is tried. Deciding an event is
// idempotent (runs coalesce, checks are looked up by external id), so a
// GitHub outage during it is worth a retry with River's backoff.
const eventAttempts = 5

// eventTimeout bounds one attempt at an event: a few API calls and a fetch.
const eventTimeout = 10 * time.Minute

// EventArgs is one accepted webhook delivery waiting to be decided: trust,
// configuration and pipelines are resolved by the event handler, which
// enqueues runs with EnqueueRuns. Payload is the runner's own event type
// as JSON; the queue does not look inside.
type EventArgs struct {
	DeliveryID string          `json:"delivery_id"`
	Event      string          `json:"event"` // X-GitHub-Event
	Payload    json.RawMessage `json:"payload"`
}

// Kind is the River job kind of an event.
func (EventArgs) Kind() string { return "kilroy.event" }

// InsertOpts puts events on their own queue. They are not unique by args:
// the delivery id dedupe in the same transaction already is.
func (EventArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: eventAttempts, Queue: eventQueueName}
}

// EventJob is what an event handler works on.
type EventJob struct {
	EventArgs
	JobID   int64
	Attempt int // 1 on the first attempt
}

// EventResult says what EnqueueEvent did.
type EventResult struct {
	// Duplicate is true when the delivery id was seen before; nothing was
	// enqueued.
	Duplicate bool
}

// EnqueueEvent durably records a delivery and queues its event in one
// transaction, which is what the webhook's 202 promises: a redelivery of
// the same id is a no-op (Duplicate), and heads are remembered SHA→PR
// mappings as for EnqueueDelivery. The event becomes an event job shortly
// after (intake.go). Concurrent calls share a transaction (see batch.go);
// each returns only after the commit that holds its delivery. Any
// database error wraps ErrUnavailable.
func (q *Queue) EnqueueEvent(ctx context.Context, d Delivery, ev EventArgs) (EventResult, error) {
	if d.ID == "" {
		return EventResult{}, errors.New("enqueue event: empty delivery id")
	}
	ev.DeliveryID = d.ID
	if len(ev.Payload) == 0 {
		ev.Payload = json.RawMessage("null")
	}
	return q.events.submit(ctx, d, ev)
}

// EnqueueRuns enqueues runs decided by an event handler: the same
// coalescing and supersede as EnqueueDelivery, without a delivery to
// dedupe (the event job was deduplicated when it was accepted). heads are
// SHA→PR mappings to remember even when jobs is empty.
func (q *Queue) EnqueueRuns(ctx context.Context, heads []PRHead, jobs []RunArgs) (EnqueueResult, error) {
	for i := range jobs {
		if err := jobs[i].validate(); err != nil {
			return EnqueueResult{}, fmt.Errorf("enqueue runs: %w", err)
		}
	}
	release, err := q.takeGate(ctx, "enqueue runs")
	if err != nil {
		return EnqueueResult{}, err
	}
	defer release()
	var res EnqueueResult
	err = q.eng.inTx(ctx, func(tx txOps) error {
		res = EnqueueResult{}
		return q.enqueueRunsTx(ctx, tx, heads, jobs, &res)
	})
	if err != nil {
		return EnqueueResult{}, unavailable("enqueue runs", err)
	}
	q.kickDispatch()
	q.signalStopped(res.Superseded, stateSuperseded)
	return res, nil
}

// takeGate waits for the enqueue gate (see Queue.enqueueGate).
func (q *Queue) takeGate(ctx context.Context, op string) (func(), error) {
	select {
	case q.enqueueGate <- struct{}{}:
		return func() { <-q.enqueueGate }, nil
	case <-ctx.Done():
		return nil, unavailable(op, ctx.Err())
	}
}

// eventWorker adapts River's worker interface to the event handler.
type eventWorker struct {
	river.WorkerDefaults[EventArgs]
	q *Queue
}

// Timeout bounds an event attempt; the queue-wide JobTimeout is off for
// the sake of runs.
func (w *eventWorker) Timeout(*river.Job[EventArgs]) time.Duration { return eventTimeout }

func (w *eventWorker) Work(ctx context.Context, job *river.Job[EventArgs]) error {
	h := w.q.handlers.Event
	if h == nil {
		return river.JobCancel(errors.New("no event handler: start the queue with Handlers.Event"))
	}
	return callEventHandler(ctx, h, EventJob{EventArgs: job.Args, JobID: job.ID, Attempt: job.Attempt})
}

// callEventHandler turns a panic into an error, like callHandler.
func callEventHandler(ctx context.Context, h func(context.Context, EventJob) error, job EventJob) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("event %s: handler panic: %v", job.DeliveryID, p)
		}
	}()
	return h(ctx, job)
}
