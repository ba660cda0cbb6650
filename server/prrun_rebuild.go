package server

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"

	"github.com/kilroy-bot/kilroy-bot/queue"
	"github.com/kilroy-bot/kilroy-bot/runner"
	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
)

// Cross-replica resume. With a queue several replicas share, a run keeps
// its resumable state in the database as it goes (dbStore), and a replica
// handed an interrupted run it has no run directory for rebuilds the
// directory from that state and the run branch on the remote
// (runner.RebuildRunDir), then resumes it like any other.

// stateDB is the part of the queue that keeps runs' resumable state.
type stateDB interface {
	SaveRunStart(ctx context.Context, runID string, header, graph []byte) error
	SaveCheckpoints(ctx context.Context, runID string, rows []queue.CheckpointRow) error
}

// dbStore is a run's StateStore in the database. A write that fails is
// logged and kept: the next checkpoint writes it again with its own, so
// the stored checkpoints stay a prefix of the journal without a gap.
type dbStore struct {
	db      stateDB
	log     *slog.Logger
	pending []queue.CheckpointRow
}

func (s *dbStore) RunStarted(ctx context.Context, runID string, header, graph []byte) {
	if err := s.db.SaveRunStart(ctx, runID, header, graph); err != nil {
		s.log.Warn("run: store the run's start for other replicas", "err", err)
	}
}

func (s *dbStore) Checkpointed(ctx context.Context, runID string, rec runner.CheckpointRecord) {
	b, err := json.Marshal(rec)
	if err != nil {
		s.log.Warn("run: encode checkpoint for other replicas", "seq", rec.Seq, "err", err)
		return
	}
	s.pending = append(s.pending, queue.CheckpointRow{Seq: rec.Seq, Record: b})
	if err := s.db.SaveCheckpoints(ctx, runID, s.pending); err != nil {
		s.log.Warn("run: store checkpoint for other replicas; retried with the next", "seq", rec.Seq, "err", err)
		return
	}
	s.pending = s.pending[:0]
}

// store is the run's StateStore: the database when replicas share it.
// (With SQLite one process owns the data dir, and the run directory is
// all a restart needs.)
func (r *prRun) store() runner.StateStore {
	if r.s.o.Queue == nil || !r.s.o.Queue.Shared() {
		return nil
	}
	return &dbStore{db: r.s.o.Queue, log: r.log}
}

// rebuild makes the run directory of an interrupted run that another
// replica worked, when this one has none and the database has the run's
// state. ok is false when there is nothing to rebuild from.
func (r *prRun) rebuild(ctx context.Context, src gitops.TokenSource) (ok bool) {
	if _, err := os.Stat(r.dir.Checkpoint()); !errors.Is(err, os.ErrNotExist) || r.store() == nil {
		return false
	}
	st, found, err := r.s.o.Queue.RunState(ctx, r.job.RunID)
	if err != nil || !found {
		r.log.Info("run: no state stored by another replica", "err", err)
		return false
	}
	git, err := r.s.gitFor(r.dir.GitHome(), src)
	if err != nil {
		r.log.Warn("run: rebuild", "err", err)
		return false
	}
	repo := Repo{FullName: r.job.Repo, CloneURL: r.job.CloneURL}
	repo.Owner, repo.Name = splitRepo(r.job.Repo)
	f, err := r.s.fetchPR(ctx, git, repo, r.job.PR, r.job.HeadSHA, r.job.BaseRef)
	if err != nil {
		r.log.Warn("run: rebuild: fetch", "err", err)
		return false
	}
	stored := runner.Stored{Header: st.Header, Graph: st.Graph}
	for _, c := range st.Checkpoints {
		stored.Records = append(stored.Records, c.Record)
	}
	cp, err := runner.RebuildRunDir(ctx, git, r.dir, f.mirror, r.job.CloneURL, stored)
	if err != nil {
		r.log.Warn("run: cannot rebuild the run directory another replica ran; starting over", "err", err)
		return false
	}
	r.log.Info("run: rebuilt the run directory from the database and the remote run branch",
		"checkpoint", cp.CommitSHA, "seq", cp.Seq, "stored", len(stored.Records))
	return true
}
