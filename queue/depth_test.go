package queue

import (
	"context"
	"errors"
	"testing"
)

func TestDepthAndPing(t *testing.T) {
	ctx := context.Background()
	q := sqliteOpener(t.TempDir())(t)
	var ds deliveries
	depth := func() int {
		t.Helper()
		n, err := q.Depth(ctx)
		if err != nil {
			t.Fatalf("Depth: %v", err)
		}
		return n
	}
	if err := q.Ping(ctx); err != nil {
		t.Fatalf("Ping on an open queue: %v", err)
	}
	if n := depth(); n != 0 {
		t.Fatalf("Depth of an empty queue = %d, want 0", n)
	}
	enqueue(t, q, ds.next(), args(1, "a1", "ci"), args(1, "a1", "lint"), args(2, "b1", "ci"))
	if n := depth(); n != 3 {
		t.Fatalf("Depth after 3 runs = %d, want 3", n)
	}
	// A new head supersedes pull request 1's ci run: still three unfinished.
	enqueue(t, q, ds.next(), args(1, "a2", "ci"))
	if n := depth(); n != 3 {
		t.Fatalf("Depth after a supersede = %d, want 3", n)
	}
	if _, err := q.CancelBy(ctx, "octo/widgets", 2, "", "@octocat"); err != nil {
		t.Fatal(err)
	}
	if n := depth(); n != 2 {
		t.Fatalf("Depth after cancelling pull request 2 = %d, want 2", n)
	}

	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if err := q.Ping(ctx); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Ping on a closed queue = %v, want ErrUnavailable", err)
	}
	if _, err := q.Depth(ctx); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Depth on a closed queue = %v, want ErrUnavailable", err)
	}
}
