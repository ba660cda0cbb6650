package queue

import (
	"context"
	"errors"
	"testing"
)

// TestMergeGroupRuns: a merge group's run (pull request 5, the group's
// head) leaves the pull request's own run going and is not recorded as a
// head of it, and CancelHead stops the group's runs of every pipeline and
// nothing else.
func TestMergeGroupRuns(t *testing.T) {
	q := sqliteOpener(t.TempDir())(t)
	ctx := context.Background()
	started := make(chan RunJob, 4)
	causes := make(chan error, 4)
	startQueue(t, q, func(ctx context.Context, job RunJob) error {
		started <- job
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return ctx.Err()
	})
	pr, err := q.EnqueueRuns(ctx, nil, []RunArgs{args(5, "head", "ci")})
	if err != nil {
		t.Fatal(err)
	}
	recv(t, started, "the pull request's run to start")
	group := []RunArgs{args(5, "group", "ci"), args(5, "group", "lint")}
	for i := range group {
		group[i].Trigger = TriggerMergeGroup
	}
	res, err := q.EnqueueRuns(ctx, nil, group)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Superseded) != 0 {
		t.Errorf("the merge group's runs superseded %+v, want nothing", res.Superseded)
	}
	recv(t, started, "a group's run to start")
	if pr, ok, err := q.LookupPRBySHA(ctx, "octo/widgets", "group"); err != nil || ok {
		t.Errorf("LookupPRBySHA(group) = %d, %v, %v; a group's commit is no head of the pull request", pr, ok, err)
	}
	runs, err := q.CancelHead(ctx, "octo/widgets", "group", "merge group dequeued")
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].HeadSHA != "group" || runs[1].HeadSHA != "group" {
		t.Fatalf("CancelHead = %+v, want the group's two runs", runs)
	}
	var ce *CancelledError
	if cause := recv(t, causes, "the group's running handler"); !errors.As(cause, &ce) || ce.CancelledBy != "merge group dequeued" {
		t.Errorf("cause = %#v, want cancelled by merge group dequeued", cause)
	}
	run, err := q.RunByID(ctx, pr.Jobs[0].RunID)
	if err != nil {
		t.Fatal(err)
	}
	if run.State != "running" {
		t.Errorf("the pull request's own run is %s, want running", run.State)
	}
}
