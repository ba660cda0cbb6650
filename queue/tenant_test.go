package queue

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTenantSQLite(t *testing.T) { testTenant(t, sqliteOpener(t.TempDir())) }

func TestTenantPostgres(t *testing.T) { testTenant(t, postgresOpener(startPostgres(t))) }

// testTenant is what retention and uninstalls rely on: Active names the
// runs a worker may still work or holds, ReposOfOwner finds an account's
// repositories without case, CancelRepo stops every unfinished run of a
// repository, and ForgetRepo deletes its rows but those still held.
func testTenant(t *testing.T, open opener) {
	ctx := context.Background()
	var dl deliveries
	q := open(t)
	other := args(9, "ccc", "ci")
	other.Repo = "Octo_x/gadgets" // an underscore: no LIKE wildcard may match it
	res := enqueue(t, q, dl.next(), args(1, "aaa", "ci"), args(2, "bbb", "ci"), args(3, "ddd", "ci"), other)
	queued, running, done, otherRun := res.Jobs[0].RunID, res.Jobs[1].RunID, res.Jobs[2].RunID, res.Jobs[3].RunID
	set := func(id, state, owner string) {
		t.Helper()
		if _, err := q.eng.pool().exec(ctx, q.d.rebind(`UPDATE runs SET state = ?, owner = ? WHERE run_id = ?`), state, owner, id); err != nil {
			t.Fatal(err)
		}
	}
	set(running, stateRunning, "replica-2")
	if err := q.SaveRunStart(ctx, done, []byte("{}"), []byte("digraph {}")); err != nil {
		t.Fatal(err)
	}
	set(done, stateDone, "")
	if _, err := q.Wait(ctx, done, "approve", "?"); err != nil {
		t.Fatal(err)
	}

	active, err := q.Active(ctx, []string{queued, running, done, otherRun, "01UNKNOWN"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(active, map[string]bool{queued: true, running: true, otherRun: true}); diff != "" {
		t.Errorf("Active (-got +want):\n%s", diff)
	}

	for owner, want := range map[string][]string{"OCTO": {"octo/widgets"}, "octo_x": {"Octo_x/gadgets"}, "oct": nil} {
		got, err := q.ReposOfOwner(ctx, owner)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(got, want); diff != "" {
			t.Errorf("ReposOfOwner(%s) (-got +want):\n%s", owner, diff)
		}
	}

	cancelled, err := q.CancelRepo(ctx, "octo/widgets", "uninstalled")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range cancelled {
		ids = append(ids, r.ID)
	}
	slices.Sort(ids)
	want := []string{queued, running}
	slices.Sort(want)
	if diff := cmp.Diff(ids, want); diff != "" {
		t.Errorf("CancelRepo (-got +want):\n%s", diff)
	}
	// The running run's handler has not returned (its owner is set): kept.
	if kept, err := q.ForgetRepo(ctx, "octo/widgets"); err != nil || kept != 1 {
		t.Errorf("ForgetRepo while a run is held = %d, %v; want 1 kept", kept, err)
	}
	set(running, stateCancelled, "")
	if kept, err := q.ForgetRepo(ctx, "octo/widgets"); err != nil || kept != 0 {
		t.Errorf("ForgetRepo = %d, %v; want 0 kept", kept, err)
	}
	left, err := q.RunsOfRepo(ctx, "octo/widgets")
	if err != nil || len(left) != 0 {
		t.Errorf("runs left of the forgotten repository: %+v, %v", left, err)
	}
	if heads, err := q.HeadsOfPR(ctx, "octo/widgets", 1); err != nil || len(heads) != 0 {
		t.Errorf("heads left of the forgotten repository: %+v, %v", heads, err)
	}
	var waiting int
	r, err := q.eng.pool().query(ctx, `SELECT COUNT(*) FROM waiting`)
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
		_ = r.Scan(&waiting)
	}
	r.Close()
	if waiting != 0 {
		t.Errorf("%d waiting rows left of the forgotten repository", waiting)
	}
	if _, ok, err := q.RunState(ctx, done); err != nil || ok {
		t.Errorf("resumable state of a forgotten run: ok %v, %v; want none", ok, err)
	}
	if runs, err := q.RunsOfRepo(ctx, "Octo_x/gadgets"); err != nil || len(runs) != 1 {
		t.Errorf("the other account's runs = %+v, %v; want its one run untouched", runs, err)
	}
}
