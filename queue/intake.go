package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"
)

// The intake. A webhook's 202 promises that the delivery is stored, not
// that it is already a River job: EnqueueEvent commits the delivery's
// dedupe row and an intake row (a few small inserts, one fsync per group
// commit), and the pump below turns intake rows into event jobs in large
// batches, each batch in one transaction that inserts the jobs and deletes
// their rows. A crash between the two leaves the rows for the next pump; a
// row never becomes two jobs.
//
// River's insert is most of what storing a delivery costs, so the pump
// defers it while deliveries are arriving: it waits until the webhook has
// been quiet for pumpQuiet, or until the oldest waiting delivery is
// pumpMaxLag old. A burst is therefore acknowledged at the speed of the
// small inserts, and decided a moment later; under load that lasts longer
// than pumpMaxLag the pump runs between the webhook's commits and the
// deliveries are taken at the speed of both together.

const (
	// pumpQuiet is how long no delivery may have been committed before the
	// pump takes its turn.
	pumpQuiet = 20 * time.Millisecond
	// pumpMaxLag bounds how long a delivery waits for its event job while
	// deliveries keep arriving.
	pumpMaxLag = 3 * time.Second
	// pumpBatch is the most rows one pump transaction moves.
	pumpBatch = 256
	// pumpPoll looks for rows nobody announced (Postgres only): another
	// replica's, left when it stopped. With SQLite this process owns the
	// database: Open moves what an earlier process left, and every later
	// row is announced by the committer.
	pumpPoll = time.Second
	// pumpRetry is the pause after a failed pump transaction.
	pumpRetry = time.Second
)

// intakePump is the pump's state shared with the group committer.
type intakePump struct {
	wake chan struct{} // buffered 1: "rows were committed"
	// lastCommit is when the committer last stored deliveries (Unix ns).
	lastCommit atomic.Int64
	// oldest is when the oldest row known to wait was stored (Unix ns), 0
	// when none is known. It is a hint for the lag bound: the committer
	// sets it when it was 0, the pump after each batch.
	oldest atomic.Int64
	stop   chan struct{} // closed by shutdown: drain and exit
	done   chan struct{} // closed when the pump has exited
	now    func() time.Time
}

func newIntakePump() *intakePump {
	return &intakePump{
		wake: make(chan struct{}, 1),
		stop: make(chan struct{}),
		done: make(chan struct{}),
		now:  time.Now,
	}
}

// queued is the committer's note that rows were committed.
func (p *intakePump) queued() {
	now := p.now().UnixNano()
	p.lastCommit.Store(now)
	p.oldest.CompareAndSwap(0, now)
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// shutdown makes the pump move every row left without waiting, and waits
// for it. Call it after the committer has stopped.
func (p *intakePump) shutdown() {
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	<-p.done
}

// stopping reports whether shutdown was called.
func (p *intakePump) stopping() bool {
	select {
	case <-p.stop:
		return true
	default:
		return false
	}
}

// wait returns once the pump may take its turn: the webhook has been
// quiet for pumpQuiet, the oldest row is pumpMaxLag old, or shutdown.
func (p *intakePump) wait() {
	for {
		now := p.now().UnixNano()
		quietFor := time.Duration(now - p.lastCommit.Load())
		lag := time.Duration(0)
		if o := p.oldest.Load(); o != 0 {
			lag = time.Duration(now - o)
		}
		if quietFor >= pumpQuiet || lag >= pumpMaxLag {
			return
		}
		// With no row known to wait, lag is 0 and the quiet period is the
		// shorter wait.
		t := time.NewTimer(min(pumpQuiet-quietFor, pumpMaxLag-lag))
		select {
		case <-t.C:
		case <-p.stop:
			t.Stop()
			return
		}
	}
}

// pumpIntake is the pump goroutine: it moves rows whenever some were
// committed or the poll finds some, and drains the intake at shutdown.
func (q *Queue) pumpIntake(p *intakePump) {
	defer close(p.done)
	var poll <-chan time.Time
	if !q.d.exclusive {
		t := time.NewTicker(pumpPoll)
		defer t.Stop()
		poll = t.C
	}
	for {
		select {
		case <-p.wake:
		case <-poll:
		case <-p.stop:
			_ = q.drainIntake(p) // logged; kept for the next start
			return
		}
		for {
			p.wait()
			more, err := q.pumpOnce(p)
			if err != nil {
				// The rows are still there: try again, also when no
				// delivery comes to wake the pump.
				q.log.Error("queue: intake pump; retrying", "err", err)
				select {
				case <-time.After(pumpRetry):
				case <-p.stop:
				}
				more = true
			}
			if !more || p.stopping() {
				break
			}
		}
	}
}

// drainIntake moves every row without waiting, at Open and at shutdown,
// giving up on the first failure: the rows stay for the next start.
func (q *Queue) drainIntake(p *intakePump) error {
	for {
		more, err := q.pumpOnce(p)
		if err != nil {
			q.log.Error("queue: intake left for the next start", "err", err)
			return err
		}
		if !more {
			return nil
		}
	}
}

// pumpOnce moves up to pumpBatch rows into event jobs in one transaction
// and reports whether more rows wait.
func (q *Queue) pumpOnce(p *intakePump) (more bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), eventCommitTimeout)
	defer cancel()
	release, err := q.takeGate(ctx, "pump intake")
	if err != nil {
		return false, err
	}
	defer release()
	var next int64 // received_at (ms) of the first row left, 0 if none
	err = q.eng.inTx(ctx, func(tx txOps) error {
		var rows []EventArgs
		rows, next, err = q.takeIntake(ctx, tx)
		if err != nil || len(rows) == 0 {
			return err
		}
		jobs := make([]river.JobArgs, len(rows))
		ids := make([]any, len(rows))
		for i, r := range rows {
			jobs[i], ids[i] = r, r.DeliveryID
		}
		if _, err := tx.insertJobs(ctx, jobs); err != nil {
			return fmt.Errorf("insert %d event jobs: %w", len(jobs), err)
		}
		del := q.d.rebind(`DELETE FROM intake WHERE delivery_id IN (` +
			strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ") + `)`)
		if _, err := tx.exec(ctx, del, ids...); err != nil {
			return fmt.Errorf("delete %d intake rows: %w", len(ids), err)
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	// A row committed meanwhile was stored after the oldest known one, so
	// replacing the hint only loses it when the intake looked empty; the
	// committer's next commit or the quiet period covers that.
	p.oldest.Store(next * int64(time.Millisecond))
	return next != 0, nil
}

// takeIntake reads the oldest rows, up to pumpBatch, and the receipt time
// of the next one.
func (q *Queue) takeIntake(ctx context.Context, tx txOps) ([]EventArgs, int64, error) {
	r, err := tx.query(ctx, q.q.takeIntake, pumpBatch+1)
	if err != nil {
		return nil, 0, fmt.Errorf("read intake: %w", err)
	}
	defer r.Close()
	var (
		rows []EventArgs
		next int64
	)
	for r.Next() {
		var (
			a       EventArgs
			payload string
			at      int64
		)
		if err := r.Scan(&a.DeliveryID, &a.Event, &payload, &at); err != nil {
			return nil, 0, fmt.Errorf("read intake: %w", err)
		}
		if len(rows) == pumpBatch {
			next = at
			break
		}
		a.Payload = json.RawMessage(payload)
		rows = append(rows, a)
	}
	if err := r.Err(); err != nil {
		return nil, 0, fmt.Errorf("read intake: %w", err)
	}
	return rows, next, nil
}
