package queue

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestAnswersSQLite(t *testing.T) {
	testAnswers(t, sqliteOpener(t.TempDir()))
}

// testAnswers is the answers contract both drivers meet: what waits is
// listed per pull request and only for unfinished runs; an answer is
// stored only while its node waits, the latest wins, and it is taken once;
// stopping to wait drops an answer not taken.
func testAnswers(t *testing.T, open opener) {
	ctx := context.Background()
	var dl deliveries
	q := open(t)
	res := enqueue(t, q, dl.next(), args(1, "aaa", "ci"), args(1, "aaa", "deploy"), args(2, "bbb", "ci"))
	ci, deploy, other := res.Jobs[0].RunID, res.Jobs[1].RunID, res.Jobs[2].RunID

	if ok, err := q.RecordAnswer(ctx, ci, "approve", "yes", "alice"); err != nil || ok {
		t.Fatalf("RecordAnswer before the node waits = %v, %v; want false", ok, err)
	}
	for _, w := range []struct{ run, node string }{{ci, "approve"}, {deploy, "approve"}, {other, "approve"}} {
		if before, err := q.Wait(ctx, w.run, w.node, `{"text":"old"}`); err != nil || before != "" {
			t.Fatalf("first Wait = %q, %v; want nothing recorded before", before, err)
		}
	}
	// Waiting again replaces, and says what was recorded.
	if before, err := q.Wait(ctx, ci, "approve", `{"text":"Ship?"}`); err != nil || before != `{"text":"old"}` {
		t.Fatalf("second Wait = %q, %v; want the first question", before, err)
	}
	got, err := q.WaitingOf(ctx, "octo/widgets", 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []Waiting{
		{RunID: ci, Pipeline: "ci", HeadSHA: "aaa", Node: "approve", Question: `{"text":"Ship?"}`},
		{RunID: deploy, Pipeline: "deploy", HeadSHA: "aaa", Node: "approve", Question: `{"text":"old"}`},
	}
	byRun := cmpopts.SortSlices(func(a, b Waiting) bool { return a.RunID < b.RunID })
	if diff := cmp.Diff(got, want, byRun, cmpopts.IgnoreFields(Waiting{}, "Since")); diff != "" {
		t.Errorf("WaitingOf(#1) (-got +want):\n%s", diff)
	}
	for _, w := range got {
		if time.Since(w.Since) > time.Minute || w.Since.After(time.Now()) {
			t.Errorf("waiting since %v, want about now", w.Since)
		}
	}

	if _, _, ok, err := q.TakeAnswer(ctx, ci, "approve"); err != nil || ok {
		t.Fatalf("TakeAnswer before any answer: ok %v, err %v", ok, err)
	}
	for _, a := range []struct{ choice, by string }{{"no", "bob"}, {"yes", "alice"}} {
		if ok, err := q.RecordAnswer(ctx, ci, "approve", a.choice, a.by); err != nil || !ok {
			t.Fatalf("RecordAnswer(%s) = %v, %v; want true", a.choice, ok, err)
		}
	}
	if choice, by, ok, err := q.TakeAnswer(ctx, ci, "approve"); err != nil || !ok || choice != "yes" || by != "alice" {
		t.Fatalf("TakeAnswer = %q, %q, %v, %v; want the latest answer, yes by alice", choice, by, ok, err)
	}
	if _, _, ok, err := q.TakeAnswer(ctx, ci, "approve"); err != nil || ok {
		t.Fatalf("an answer was taken twice: ok %v, err %v", ok, err)
	}
	if _, _, ok, _ := q.TakeAnswer(ctx, deploy, "approve"); ok {
		t.Fatal("the answer for one run reached another")
	}

	// An answer the run did not take goes when it stops waiting.
	if ok, err := q.RecordAnswer(ctx, deploy, "approve", "yes", "alice"); err != nil || !ok {
		t.Fatalf("RecordAnswer(deploy) = %v, %v", ok, err)
	}
	if err := q.StopWaiting(ctx, deploy, "approve"); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, _ := q.TakeAnswer(ctx, deploy, "approve"); ok {
		t.Error("an answer outlived the wait it answered")
	}
	if ok, _ := q.RecordAnswer(ctx, deploy, "approve", "yes", "alice"); ok {
		t.Error("an answer was stored for a node that stopped waiting")
	}

	// A finished run is not listed, whatever rows it left.
	if _, err := q.CancelBy(ctx, "octo/widgets", 1, "ci", "@alice"); err != nil {
		t.Fatal(err)
	}
	if got, err := q.WaitingOf(ctx, "octo/widgets", 1); err != nil || len(got) != 0 {
		t.Errorf("WaitingOf(#1) after its runs ended = %+v, %v; want none", got, err)
	}
	if got, err := q.WaitingOf(ctx, "octo/widgets", 2); err != nil || len(got) != 1 || got[0].RunID != other {
		t.Errorf("WaitingOf(#2) = %+v, %v; want run %s", got, err, other)
	}

	// Leftovers go with the 30-day retention.
	if ok, err := q.RecordAnswer(ctx, other, "approve", "yes", "alice"); err != nil || !ok {
		t.Fatalf("RecordAnswer(other) = %v, %v", ok, err)
	}
	if err := q.prune(ctx, time.Now().Add(-retention)); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, q, `SELECT count(*) FROM answers`); n != 1 {
		t.Fatalf("prune dropped a fresh answer: %d left", n)
	}
	if err := q.prune(ctx, time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"waiting", "answers"} {
		if n := countRows(t, q, `SELECT count(*) FROM `+table); n != 0 {
			t.Errorf("%d rows of %s outlived the retention", n, table)
		}
	}
}
