package queue

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestHeadsOfPR: the heads of one pull request, oldest first, each with
// when it was last heard of; other pull requests' heads are not listed.
func TestHeadsOfPR(t *testing.T) {
	ctx := context.Background()
	q := sqliteOpener(t.TempDir())(t)
	record := func(pr int, sha string) time.Time {
		t.Helper()
		before := time.Now().Truncate(time.Millisecond)
		if _, err := q.EnqueueRuns(ctx, []PRHead{{Repo: "fork/gated", PR: pr, HeadSHA: sha}}, nil); err != nil {
			t.Fatal(err)
		}
		// Poll until the clock has moved on from the moment the head was
		// recorded (at most now), so the next head is later.
		recorded := time.Now().Truncate(time.Millisecond)
		for time.Now().Truncate(time.Millisecond).Equal(recorded) {
		}
		return before
	}
	a := record(12, "aaa")
	record(13, "ccc")
	b := record(12, "bbb")
	heads, err := q.HeadsOfPR(ctx, "fork/gated", 12)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range heads {
		got = append(got, h.SHA)
	}
	if diff := cmp.Diff(got, []string{"aaa", "bbb"}); diff != "" {
		t.Fatalf("HeadsOfPR(12) (-got +want):\n%s", diff)
	}
	if heads[0].SeenAt.Before(a) || !heads[0].SeenAt.Before(b) || heads[1].SeenAt.Before(b) {
		t.Errorf("seen at %v and %v; want aaa at or after %v and before bbb, bbb at or after %v",
			heads[0].SeenAt, heads[1].SeenAt, a, b)
	}
	// Heard of again, aaa becomes the latest.
	record(12, "aaa")
	if heads, err = q.HeadsOfPR(ctx, "fork/gated", 12); err != nil || len(heads) != 2 || heads[1].SHA != "aaa" {
		t.Errorf("after aaa again: %+v, %v; want bbb then aaa", heads, err)
	}
}
