package queue

import (
	"context"
	"sync"
	"testing"
	"time"
)

func TestSpendSQLite(t *testing.T) {
	dir := t.TempDir()
	testSpend(t, sqliteOpener(dir), sqliteOpener(dir), false)
}

// testSpend is the spend contract: increments add up per installation and
// UTC day (concurrent ones too, from two queues on one database when
// shared), each returning the day's new total; another day starts at
// zero; pruning forgets days before the one given.
func testSpend(t *testing.T, openA, openB opener, shared bool) {
	ctx := context.Background()
	a := openA(t)
	b := a
	if shared {
		b = openB(t) // another replica on the same database
	}
	now := time.Date(2026, 3, 4, 23, 59, 59, 0, time.UTC)
	today, tomorrow := SpendDay(now), SpendDay(now.Add(time.Second))
	if today == tomorrow {
		t.Fatalf("SpendDay(%s) = SpendDay(a second later) = %s", now, today)
	}
	const n, each = 40, 0.125
	var wg sync.WaitGroup
	totals := make(chan float64, n)
	for i := range n {
		q := []*Queue{a, b}[i%2]
		wg.Go(func() {
			total, err := q.AddSpend(ctx, 7, today, each, 100)
			if err != nil {
				t.Error(err)
			}
			totals <- total
		})
	}
	wg.Wait()
	close(totals)
	seen := map[float64]bool{}
	for tot := range totals {
		if seen[tot] {
			t.Errorf("two increments returned the same total %v: not atomic", tot)
		}
		seen[tot] = true
	}
	for _, q := range []*Queue{a, b} {
		if got, err := q.Spend(ctx, 7, today); err != nil || got != n*each {
			t.Errorf("Spend(7, today) = %v, %v; want %v", got, err, n*each)
		}
		if got, err := q.Spend(ctx, 7, tomorrow); err != nil || got != 0 {
			t.Errorf("Spend(7, tomorrow) = %v, %v; want 0: a new day starts afresh", got, err)
		}
		if got, err := q.Spend(ctx, 8, today); err != nil || got != 0 {
			t.Errorf("Spend(8, today) = %v, %v; want 0: installations are apart", got, err)
		}
	}
	if total, err := b.AddSpend(ctx, 7, tomorrow, 1, 1); err != nil || total != 1 {
		t.Errorf("AddSpend(7, tomorrow) = %v, %v; want 1", total, err)
	}
	if err := a.PruneSpend(ctx, tomorrow); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.Spend(ctx, 7, today); got != 0 {
		t.Errorf("after pruning, today's spend is %v", got)
	}
	if got, _ := b.Spend(ctx, 7, tomorrow); got != 1 {
		t.Errorf("pruning took tomorrow's spend too: %v", got)
	}
}
