// Package queue is kilroy-bot's durable job queue: webhook deliveries become
// pipeline runs that survive restarts, built on River.
//
// The model. A GitHub delivery is accepted by EnqueueDelivery, which in one
// database transaction records its X-GitHub-Delivery id (a redelivery is a
// no-op), records one row per run in our small runs table, inserts one River
// job per run, and cancels the runs the new ones supersede. Only after that
// transaction commits may the webhook answer 202; any database failure comes
// back as ErrUnavailable, which the webhook turns into 503; GitHub does not
// retry, serve asks for the delivery again later (webhook/redeliver).
//
// Events. The webhook's sink may instead record the delivery with its event
// (EnqueueEvent, one transaction, same dedupe): the event waits in the
// intake table until the intake pump makes it an event job (intake.go:
// River's insert is the expensive part, so a burst is acknowledged first
// and turned into jobs when the webhook is quiet, or after at most a few
// seconds). A worker on a queue of its own (so events are decided while
// every run worker is busy) resolves trust, configuration and pipelines,
// which need GitHub calls and a fetch, and enqueues the runs with
// EnqueueRuns. Concurrent EnqueueEvent calls share one transaction (group
// commit, batch.go): each still returns only after the commit that holds
// its delivery. Event jobs are retried with River's backoff; run jobs are
// not (see below). StartHandlers takes a handler for each kind.
//
// Identity. A run is one (repository, pull request, head SHA, pipeline). River
// enforces it: RunArgs marks those four fields `river:"unique"` and makes them
// unique while a job is pending, scheduled, available, running or retryable,
// so a second delivery for the same key coalesces into the job already queued
// or running. A finished run does not block a re-run of the same SHA.
//
// Scheduling (sched.go). Run jobs are inserted pending; a scheduler in the
// database makes them available one worker's worth at a time: the next run
// belongs to the installation with the fewest runs going, then the one that
// started a run least recently, and within it is the oldest. Caps per
// installation and per repository keep runs queued across every replica.
//
// Supersede and cancel. A job for a new head SHA cancels every unfinished run
// of the same pull request and pipeline with another SHA (River JobCancelTx in
// the same transaction): the last request wins. A queued run is cancelled
// outright; a running one is marked for cancellation, and its handler's
// context is cancelled with a *CancelledError cause saying who superseded it
// or that it was cancelled on request. How a running handler learns of it:
// with Postgres, River's JobCancelTx sends a NOTIFY on commit and the River
// client working the job, in this process or another replica, cancels the
// job's context. River v0.47's SQLite driver sends nothing (it only marks
// the job), so the queue also cancels its own handlers right after the
// commit, and every heartbeat tick looks for runs it holds that another
// process stopped. A cancelled handler that returns an error ends the job
// cancelled (river.JobCancel), never retried.
//
// Interrupted runs (DESIGN.md §7). Runs are attempted once by River (an error
// from the handler is final: pipeline failures are results, not retries) and
// River's own time-based rescue is switched off, because a run may take an
// hour. Instead the process working a run holds it: its id is the run's owner
// and it refreshes a heartbeat. A run whose owner stopped heartbeating (a dead
// replica, or with SQLite any owner but us at start, since one process owns
// the file) is interrupted: Start and a periodic sweep hand it back to River
// as available and the handler gets it again with Resumes > 0, to resume from
// its checkpoint or finish it. A graceful Stop that must cancel a handler
// does the same through River's JobSnooze(0). So every interrupted run
// reaches a handler again, which either resumes or finishes it.
//
// Answers. A run waiting at a wait.human node records so (Wait) and polls
// TakeAnswer; the event worker lists what waits (WaitingOf) and records a
// `/kilroy answer` (RecordAnswer) only while the node still waits, so an
// answer reaches the run in whichever process works it (answers.go).
//
// Drivers. SQLite (modernc.org/sqlite, one file in the data dir, WAL with
// the default synchronous=FULL, so a committed delivery survives a crash of
// the process and a power loss alike) is the
// default, for one process per data dir; a postgres:// URL selects pgx and
// lets replicas share the queue.
// The same code drives both: River is generic over the transaction type and
// our own SQL goes through a two-method executor with portable statements.
package queue
