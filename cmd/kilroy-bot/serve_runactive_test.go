package main

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/queue"
)

// A queued run is active; a run the queue does not know (its row pruned,
// or a run directory left from elsewhere) is not.
func TestRunActive(t *testing.T) {
	ctx := context.Background()
	q, err := queue.Open(ctx, queue.Options{DataDir: t.TempDir(), Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	res, err := q.EnqueueDelivery(ctx, queue.Delivery{ID: "delivery-1", Event: "pull_request"}, []queue.RunArgs{{
		InstallationID: 42, Repo: "octo/widgets", CloneURL: "https://github.com/octo/widgets.git", PR: 1,
		HeadSHA: "0123456789abcdef0123456789abcdef01234567", BaseRef: "main", Pipeline: "ci", Trigger: queue.TriggerPullRequest,
	}})
	if err != nil {
		t.Fatal(err)
	}
	active := runActive(q)
	got := map[string]bool{"queued": active(res.Jobs[0].RunID), "unknown": active("01J9Z8Q4M6V3N5R7T9W1X3Y5Z7")}
	want := map[string]bool{"queued": true, "unknown": false}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("active (-got +want):\n%s", diff)
	}
}
