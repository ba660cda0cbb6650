package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/riverqueue/river/rivertype"
)

// Delivery is one webhook delivery.
type Delivery struct {
	ID    string // X-GitHub-Delivery
	Event string // X-GitHub-Event
	// Heads are SHA→PR mappings to remember even when nothing runs, such as
	// a gated fork PR whose re-run button arrives without pull_requests.
	// Every enqueued job's head is remembered as well, but a merge
	// group's.
	Heads []PRHead
}

// PRHead says that HeadSHA is (or was) the head of pull request PR of Repo.
type PRHead struct {
	Repo    string
	PR      int
	HeadSHA string
}

// EnqueueResult says what EnqueueDelivery did.
type EnqueueResult struct {
	// Duplicate is true when the delivery id was seen before; then nothing
	// else happened.
	Duplicate bool
	// Jobs has one entry per job given, in order.
	Jobs []Enqueued
	// Superseded are the runs the new jobs cancelled. The caller completes
	// the checks of those that never started (State queued) as cancelled,
	// "superseded by <By>"; a started run's handler sees its context
	// cancelled with a *CancelledError and finishes its own checks.
	Superseded []Superseded
}

// Enqueued is the run a job became.
type Enqueued struct {
	RunID string
	JobID int64
	// Duplicate is true when the job coalesced into an unfinished run with
	// the same repository, PR, head SHA and pipeline; RunID is that run's.
	Duplicate bool
}

// Superseded is a run cancelled because a newer head SHA was enqueued.
type Superseded struct {
	Run
	By string // the head SHA that superseded it
}

// Run is a row of the runs table.
type Run struct {
	ID       string
	Repo     string
	PR       int
	HeadSHA  string
	Pipeline string
	// State is queued, running, done, failed, cancelled or superseded; for
	// a run just superseded or cancelled, the state it was in before.
	State        string
	JobID        int64
	SupersededBy string
	Owner        string // process working it, empty when none
	HeartbeatAt  int64  // Unix milliseconds
	Resumes      int    // times it was interrupted and handed back
}

// EnqueueDelivery durably records a delivery and its jobs in one
// transaction: dedupe by delivery id, one run per job (coalescing
// duplicates), and cancellation of the runs each new job supersedes. When it
// returns nil the jobs are committed; any database error wraps ErrUnavailable.
func (q *Queue) EnqueueDelivery(ctx context.Context, d Delivery, jobs []RunArgs) (EnqueueResult, error) {
	if d.ID == "" {
		return EnqueueResult{}, errors.New("enqueue delivery: empty delivery id")
	}
	for i := range jobs {
		if err := jobs[i].validate(); err != nil {
			return EnqueueResult{}, fmt.Errorf("enqueue delivery %s: %w", d.ID, err)
		}
	}
	release, err := q.takeGate(ctx, "enqueue delivery "+d.ID)
	if err != nil {
		return EnqueueResult{}, err
	}
	defer release()
	var res EnqueueResult
	err = q.eng.inTx(ctx, func(tx txOps) error {
		res = EnqueueResult{}
		return q.enqueueTx(ctx, tx, d, jobs, &res)
	})
	if err != nil {
		return EnqueueResult{}, unavailable("enqueue delivery "+d.ID, err)
	}
	q.kickDispatch()
	q.signalStopped(res.Superseded, stateSuperseded)
	return res, nil
}

func (q *Queue) enqueueTx(ctx context.Context, tx txOps, d Delivery, jobs []RunArgs, res *EnqueueResult) error {
	fresh, err := q.recordDelivery(ctx, tx, d)
	if err != nil || !fresh {
		res.Duplicate = !fresh
		return err
	}
	return q.enqueueRunsTx(ctx, tx, nil, jobs, res)
}

// recordDelivery records a delivery id and its heads; fresh is false for
// an id seen before, and then nothing was written.
func (q *Queue) recordDelivery(ctx context.Context, tx txOps, d Delivery) (fresh bool, err error) {
	now := nowMillis()
	n, err := tx.exec(ctx, q.q.insertDelivery, d.ID, d.Event, now)
	if err != nil {
		return false, fmt.Errorf("record delivery: %w", err)
	}
	if n == 0 {
		return false, nil
	}
	for _, h := range d.Heads {
		if err := q.recordHead(ctx, tx, h.Repo, h.HeadSHA, h.PR, now); err != nil {
			return false, err
		}
	}
	return true, nil
}

// enqueueRunsTx records heads and enqueues jobs in tx.
func (q *Queue) enqueueRunsTx(ctx context.Context, tx txOps, heads []PRHead, jobs []RunArgs, res *EnqueueResult) error {
	now := nowMillis()
	for _, h := range heads {
		if err := q.recordHead(ctx, tx, h.Repo, h.HeadSHA, h.PR, now); err != nil {
			return err
		}
	}
	res.Jobs = make([]Enqueued, 0, len(jobs))
	for _, args := range jobs {
		enq, sup, err := q.enqueueJob(ctx, tx, args, now)
		if err != nil {
			return err
		}
		res.Jobs = append(res.Jobs, enq)
		res.Superseded = append(res.Superseded, sup...)
	}
	return nil
}

func (q *Queue) enqueueJob(ctx context.Context, tx txOps, args RunArgs, now int64) (Enqueued, []Superseded, error) {
	if args.RunID == "" {
		args.RunID = NewRunID()
	}
	// A merge group's commit is not a head of its pull request: recorded,
	// it would pass for the head a `/kilroy run` comment approves.
	if args.Trigger != TriggerMergeGroup {
		if err := q.recordHead(ctx, tx, args.Repo, args.HeadSHA, args.PR, now); err != nil {
			return Enqueued{}, nil, err
		}
	}
	ins, err := tx.insertJob(ctx, args)
	if err != nil {
		return Enqueued{}, nil, fmt.Errorf("insert job %s: %w", args.RunID, err)
	}
	if ins.UniqueSkippedAsDuplicate {
		runID, err := runIDOf(ins.Job)
		return Enqueued{RunID: runID, JobID: ins.Job.ID, Duplicate: true}, nil, err
	}
	// Supersede before recording the new run so it cannot match itself.
	// A merge group's run supersedes nothing: it tests another commit than
	// the pull request's head, beside the runs of that head and of other
	// groups; GitHub destroys a group it no longer needs (CancelHead).
	var sup []Superseded
	if args.Trigger != TriggerMergeGroup {
		if sup, err = q.stopRuns(ctx, tx, stopSpec{repo: args.Repo, pr: args.PR, pipeline: args.Pipeline,
			keepSHA: args.HeadSHA, state: stateSuperseded, by: args.HeadSHA}, now); err != nil {
			return Enqueued{}, nil, err
		}
	}
	if _, err := tx.exec(ctx, q.q.insertRun, args.RunID, args.Repo, args.PR, args.HeadSHA, args.Pipeline,
		ins.Job.ID, now, now); err != nil {
		return Enqueued{}, nil, fmt.Errorf("record run %s: %w", args.RunID, err)
	}
	if err := q.recordSched(ctx, tx, args, ins.Job.ID, now); err != nil {
		return Enqueued{}, nil, err
	}
	return Enqueued{RunID: args.RunID, JobID: ins.Job.ID}, sup, nil
}

func (q *Queue) recordHead(ctx context.Context, tx txOps, repo, sha string, pr int, now int64) error {
	if _, err := tx.exec(ctx, q.q.upsertHead, repo, sha, pr, now); err != nil {
		return fmt.Errorf("record head %s@%s: %w", repo, sha, err)
	}
	return nil
}

// runIDOf reads the run id of an existing job, for a coalesced insert.
func runIDOf(job *rivertype.JobRow) (string, error) {
	var args RunArgs
	if err := json.Unmarshal(job.EncodedArgs, &args); err != nil {
		return "", fmt.Errorf("decode job %d args: %w", job.ID, err)
	}
	return args.RunID, nil
}
