package queue

import (
	"context"
	"errors"
	"time"
)

// Group commit. Every accepted webhook delivery is an EnqueueEvent, and a
// transaction per delivery made the one SQLite connection (and its fsync)
// the webhook's bottleneck under a burst. So EnqueueEvent hands its
// delivery to one committer goroutine, which takes whatever deliveries are
// waiting and commits them together in one transaction: one multi-row
// delivery insert (dedupe), one heads upsert and one intake insert.
// Each caller gets its own result only after the commit that holds its
// row, or ErrUnavailable when that commit failed, for every caller in it.
// There is no waiting for a batch to fill: a batch is what piled up while
// the previous one committed, so a lone delivery commits at once.

// maxEventBatch bounds one group commit, keeping its statements well under
// SQLite's limit of bound variables and a failed batch small.
const maxEventBatch = 128

// eventCommitTimeout bounds one batch's transaction. The committer runs on
// its own context: a caller that stops waiting must not abort the others'
// commit.
const eventCommitTimeout = 30 * time.Second

// errQueueClosed answers deliveries that reach a closed queue.
var errQueueClosed = errors.New("queue closed")

// eventRequest is one EnqueueEvent waiting for its batch.
type eventRequest struct {
	d  Delivery
	ev EventArgs
	// reply is buffered so that the committer never waits for a caller
	// that gave up.
	reply chan eventReply
}

type eventReply struct {
	res EventResult
	err error
}

// eventBatcher is the committer's inbox and lifecycle.
type eventBatcher struct {
	requests chan *eventRequest
	stop     chan struct{} // closed by shutdown
	done     chan struct{} // closed when the committer has exited
}

func newEventBatcher() *eventBatcher {
	return &eventBatcher{
		requests: make(chan *eventRequest, maxEventBatch),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
}

// shutdown stops the committer once its current batch is done and waits
// for it; deliveries still waiting are answered with ErrUnavailable.
func (b *eventBatcher) shutdown() {
	select {
	case <-b.stop:
	default:
		close(b.stop)
	}
	<-b.done
}

// submit queues a delivery for the next batch and waits for that batch's
// commit. A caller whose ctx ends first gets ErrUnavailable, though its
// delivery may still commit: a redelivery then finds it a duplicate.
func (b *eventBatcher) submit(ctx context.Context, d Delivery, ev EventArgs) (EventResult, error) {
	op := "enqueue event " + d.ID
	r := &eventRequest{d: d, ev: ev, reply: make(chan eventReply, 1)}
	select {
	case b.requests <- r:
	case <-b.stop:
		return EventResult{}, unavailable(op, errQueueClosed)
	case <-ctx.Done():
		return EventResult{}, unavailable(op, ctx.Err())
	}
	select {
	case rep := <-r.reply:
		return rep.res, rep.err
	case <-ctx.Done():
		return EventResult{}, unavailable(op, ctx.Err())
	case <-b.done:
		// The committer answers before it exits, so a reply is there
		// unless the delivery slipped in after its last look.
		select {
		case rep := <-r.reply:
			return rep.res, rep.err
		default:
			return EventResult{}, unavailable(op, errQueueClosed)
		}
	}
}

// commitEvents is the committer goroutine: one batch at a time until
// shutdown.
func (q *Queue) commitEvents(b *eventBatcher) {
	defer close(b.done)
	for {
		select {
		case first := <-b.requests:
			q.commitEventBatch(b, first)
		case <-b.stop:
			failWaiting(b)
			return
		}
	}
}

// commitEventBatch commits first and whatever else is waiting once the
// enqueue gate is ours, so deliveries that arrived during the wait for
// the gate join this batch.
func (q *Queue) commitEventBatch(b *eventBatcher, first *eventRequest) {
	ctx, cancel := context.WithTimeout(context.Background(), eventCommitTimeout)
	defer cancel()
	batch := []*eventRequest{first}
	release, err := q.takeGate(ctx, "enqueue events")
	if err != nil {
		answerAll(batch, err)
		return
	}
	defer release()
	batch = drain(b, batch)
	replies := make([]eventReply, len(batch))
	queued := 0
	err = q.eng.inTx(ctx, func(tx txOps) error {
		clear(replies)
		var err error
		queued, err = q.insertEvents(ctx, tx, batch, replies)
		return err
	})
	if err != nil {
		answerAll(batch, err)
		return
	}
	if queued > 0 {
		q.pump.queued()
	}
	for i, r := range batch {
		r.reply <- replies[i]
	}
}

// drain adds the requests waiting in the inbox to batch, up to
// maxEventBatch, without waiting for more.
func drain(b *eventBatcher, batch []*eventRequest) []*eventRequest {
	for len(batch) < maxEventBatch {
		select {
		case r := <-b.requests:
			batch = append(batch, r)
		default:
			return batch
		}
	}
	return batch
}

// answerAll fails every delivery of a batch: none of them was committed.
func answerAll(batch []*eventRequest, err error) {
	for _, r := range batch {
		r.reply <- eventReply{err: unavailable("enqueue event "+r.d.ID, err)}
	}
}

// failWaiting answers the deliveries left in the inbox at shutdown.
func failWaiting(b *eventBatcher) {
	for {
		select {
		case r := <-b.requests:
			answerAll([]*eventRequest{r}, errQueueClosed)
		default:
			return
		}
	}
}
