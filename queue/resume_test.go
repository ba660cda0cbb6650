package queue

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// testRunState: a run's stored start and checkpoints read back whole, in
// order, from another connection (a second Open stands for another
// replica); a checkpoint stored again under its number replaces the
// first; the state goes when the run's row is pruned.
func testRunState(t *testing.T, open opener) {
	ctx := context.Background()
	q := open(t)
	var dl deliveries
	runID := enqueue(t, q, dl.next(), args(1, "aaa", "ci")).Jobs[0].RunID
	if _, ok, err := q.RunState(ctx, runID); err != nil || ok {
		t.Fatalf("RunState before any save = %v, %v; want none", ok, err)
	}
	if err := q.SaveRunStart(ctx, runID, []byte(`{"version":2}`), []byte("digraph ci {}")); err != nil {
		t.Fatal(err)
	}
	rows := []CheckpointRow{{1, []byte(`{"seq":1}`)}, {2, []byte(`{"seq":2}`)}}
	if err := q.SaveCheckpoints(ctx, runID, rows[:1]); err != nil {
		t.Fatal(err)
	}
	if err := q.SaveCheckpoints(ctx, runID, rows[1:]); err != nil {
		t.Fatal(err)
	}
	if err := q.SaveCheckpoints(ctx, runID, []CheckpointRow{{2, []byte(`{"seq":2,"again":true}`)}}); err != nil {
		t.Fatal(err)
	}
	other := open(t)
	got, ok, err := other.RunState(ctx, runID)
	if err != nil || !ok {
		t.Fatalf("RunState = %v, %v", ok, err)
	}
	want := RunState{Header: []byte(`{"version":2}`), Graph: []byte("digraph ci {}"),
		Checkpoints: []CheckpointRow{{1, []byte(`{"seq":1}`)}, {2, []byte(`{"seq":2,"again":true}`)}}}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("run state (-got +want):\n%s", diff)
	}
	mustExec(t, q, q.d.rebind(`UPDATE runs SET state = 'done', updated_at = 0 WHERE run_id = ?`), runID)
	if err := q.prune(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, q, `SELECT COUNT(*) FROM run_checkpoints`) + countRows(t, q, `SELECT COUNT(*) FROM run_state`); n != 0 {
		t.Errorf("%d rows of resumable state left after the run was pruned", n)
	}
}

func TestRunStateSQLite(t *testing.T) { testRunState(t, sqliteOpener(t.TempDir())) }

func TestRunStatePostgres(t *testing.T) { testRunState(t, postgresOpener(startPostgres(t))) }
