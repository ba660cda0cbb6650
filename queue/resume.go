package queue

import (
	"context"
	"fmt"
)

// Resumable state (issue: replicas share resumption). A run's directory is
// on the disk of the replica that ran it; what another replica needs to
// resume it lives here: the run's checkpoint.json and graph.dot, stored
// once per execution (SaveRunStart), and one row per checkpoint, the
// journal line the runner wrote for it (SaveCheckpoints, one small upsert
// per node). Together with the checkpoint commits on the pushed run
// branch, that rebuilds the run directory anywhere. Rows go when their
// run's row is pruned.

// resumeSchema is the two tables, created beside schema()'s.
func resumeSchema() []string {
	return []string{
		`CREATE TABLE IF NOT EXISTS run_state (
	run_id TEXT PRIMARY KEY,
	header TEXT NOT NULL,
	graph TEXT NOT NULL,
	updated_at BIGINT NOT NULL
)`,
		`CREATE TABLE IF NOT EXISTS run_checkpoints (
	run_id TEXT NOT NULL,
	seq INTEGER NOT NULL,
	record TEXT NOT NULL,
	PRIMARY KEY (run_id, seq)
)`,
	}
}

const (
	saveRunStartSQL = `INSERT INTO run_state (run_id, header, graph, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (run_id) DO UPDATE SET header = excluded.header, graph = excluded.graph, updated_at = excluded.updated_at`
	saveCheckpointSQL = `INSERT INTO run_checkpoints (run_id, seq, record) VALUES (?, ?, ?)
		ON CONFLICT (run_id, seq) DO UPDATE SET record = excluded.record`
	runStateSQL         = `SELECT header, graph FROM run_state WHERE run_id = ?`
	runCheckpointsSQL   = `SELECT seq, record FROM run_checkpoints WHERE run_id = ? ORDER BY seq`
	pruneRunStateSQL    = `DELETE FROM run_state WHERE run_id NOT IN (SELECT run_id FROM runs)`
	pruneCheckpointsSQL = `DELETE FROM run_checkpoints WHERE run_id NOT IN (SELECT run_id FROM runs)`
)

// CheckpointRow is one checkpoint of a run: its number and the runner's
// record of it (opaque here).
type CheckpointRow struct {
	Seq    int
	Record []byte
}

// RunState is what a run stored to be resumed by any replica.
type RunState struct {
	Header, Graph []byte
	Checkpoints   []CheckpointRow // by Seq
}

// SaveRunStart stores the run's checkpoint.json and graph.dot, replacing
// what an earlier execution of the run stored.
func (q *Queue) SaveRunStart(ctx context.Context, runID string, header, graph []byte) error {
	if _, err := q.eng.pool().exec(ctx, q.d.rebind(saveRunStartSQL), runID, string(header), string(graph), nowMillis()); err != nil {
		return unavailable("store the start of run "+runID, err)
	}
	return nil
}

// SaveCheckpoints stores checkpoints of the run in one transaction; a
// checkpoint stored before under the same number is replaced (a resumed
// run repeats the numbers after the one it resumed from).
func (q *Queue) SaveCheckpoints(ctx context.Context, runID string, rows []CheckpointRow) error {
	stmt := q.d.rebind(saveCheckpointSQL)
	err := q.eng.inTx(ctx, func(tx txOps) error {
		for _, r := range rows {
			if _, err := tx.exec(ctx, stmt, runID, r.Seq, string(r.Record)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return unavailable(fmt.Sprintf("store %d checkpoints of run %s", len(rows), runID), err)
	}
	return nil
}

// RunState returns what the run stored; ok is false when it stored no
// start.
func (q *Queue) RunState(ctx context.Context, runID string) (st RunState, ok bool, err error) {
	op := "resumable state of run " + runID
	r, err := q.eng.pool().query(ctx, q.d.rebind(runStateSQL), runID)
	if err != nil {
		return RunState{}, false, unavailable(op, err)
	}
	var header, graph string
	for r.Next() {
		if err := r.Scan(&header, &graph); err != nil {
			r.Close()
			return RunState{}, false, unavailable(op, err)
		}
		ok = true
	}
	r.Close()
	if err := r.Err(); err != nil || !ok {
		return RunState{}, false, errOr(op, err)
	}
	st.Header, st.Graph = []byte(header), []byte(graph)
	r, err = q.eng.pool().query(ctx, q.d.rebind(runCheckpointsSQL), runID)
	if err != nil {
		return RunState{}, false, unavailable(op, err)
	}
	defer r.Close()
	for r.Next() {
		var row CheckpointRow
		var rec string
		if err := r.Scan(&row.Seq, &rec); err != nil {
			return RunState{}, false, unavailable(op, err)
		}
		row.Record = []byte(rec)
		st.Checkpoints = append(st.Checkpoints, row)
	}
	if err := r.Err(); err != nil {
		return RunState{}, false, unavailable(op, err)
	}
	return st, true, nil
}

func errOr(op string, err error) error {
	if err == nil {
		return nil
	}
	return unavailable(op, err)
}

// pruneRunState deletes the state of runs whose row is gone.
func (q *Queue) pruneRunState(ctx context.Context) error {
	for _, stmt := range []string{pruneRunStateSQL, pruneCheckpointsSQL} {
		if _, err := q.eng.pool().exec(ctx, stmt); err != nil {
			return fmt.Errorf("prune resumable state: %w", err)
		}
	}
	return nil
}

// Shared reports whether several processes share this queue (Postgres):
// only then may a run be resumed by a process without its run directory.
func (q *Queue) Shared() bool { return !q.d.exclusive }
