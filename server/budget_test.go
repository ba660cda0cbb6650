package server

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/policy"
	"github.com/kilroy-bot/kilroy-bot/queue"
	"github.com/kilroy-bot/kilroy-bot/queue/pgtest"
)

// The server's per-run budgets cap a repository's: a repository asking
// for more (or for no cap) runs with the server's, which the reason keys
// name, and the summary notes only a lowered value; one asking for less
// keeps its own.
func TestClampBudgets(t *testing.T) {
	caps := Caps{MaxRunCostUSD: 5, MaxRunTokens: 1_000_000}
	tests := []struct {
		name      string
		in, want  policy.Limits
		wantNotes []string
	}{
		{"none asked", policy.Limits{}, policy.Limits{MaxCostUSD: 5, MaxCostUSDFrom: perRunUSDKey, MaxTokens: 1_000_000, MaxTokensFrom: perRunTokensKey}, nil},
		{"less asked", policy.Limits{MaxCostUSD: 2, MaxTokens: 10}, policy.Limits{MaxCostUSD: 2, MaxTokens: 10}, nil},
		{"more asked", policy.Limits{MaxCostUSD: 50, MaxTokens: 9_000_000},
			policy.Limits{MaxCostUSD: 5, MaxCostUSDFrom: perRunUSDKey, MaxTokens: 1_000_000, MaxTokensFrom: perRunTokensKey},
			[]string{"`limits.max_cost_usd` of $50.00", "`limits.max_tokens` of 9,000,000"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := tt.in
			notes := caps.ClampBudgets(&l)
			if diff := cmp.Diff(l, tt.want); diff != "" {
				t.Errorf("limits (-got +want):\n%s", diff)
			}
			if len(notes) != len(tt.wantNotes) {
				t.Fatalf("notes %q, want %d", notes, len(tt.wantNotes))
			}
			for i, w := range tt.wantNotes {
				if !strings.HasPrefix(notes[i], w) || !strings.Contains(notes[i], "above this server's budget") {
					t.Errorf("note %q, want it to start %q", notes[i], w)
				}
			}
		})
	}
	if l := (policy.Limits{MaxCostUSD: 50}); len(Caps{}.ClampBudgets(&l)) != 0 || l.MaxCostUSD != 50 {
		t.Errorf("a server without budgets changed the repository's: %+v", l)
	}
}

// The daily budget of an installation holds across two replicas on one
// Postgres: what either charges adds up; once the day's total reaches the
// budget both refuse more (naming the budget and when it resets), other
// installations are not touched, and the next UTC day starts afresh.
func TestDailyBudgetAcrossReplicas(t *testing.T) {
	url := pgtest.Start(t)
	ctx := context.Background()
	open := func() *queue.Queue {
		q, err := queue.Open(ctx, queue.Options{DatabaseURL: url})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = q.Close() })
		return q
	}
	now := time.Date(2026, 5, 6, 23, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	log := slog.New(slog.DiscardHandler)
	const limit = 1.0
	chargeA, allowA := DailyBudget{MaxUSD: limit, Store: open(), Now: clock}.hooks(ctx, log, 11)
	chargeB, allowB := DailyBudget{MaxUSD: limit, Store: open(), Now: clock}.hooks(ctx, log, 11)
	_, allowOther := DailyBudget{MaxUSD: limit, Store: open(), Now: clock}.hooks(ctx, log, 12)
	step := attractor.Usage{InputTokens: 1000, CostUSD: 0.3, CostSource: attractor.CostPriced}
	for i, charge := range []func(attractor.Usage) error{chargeA, chargeB, chargeA} {
		if err := charge(step); err != nil {
			t.Fatalf("charge %d of $0.30 against a $1 budget: %v", i+1, err)
		}
	}
	if err := allowB(); err != nil {
		t.Fatalf("allow at $0.90 of $1: %v", err)
	}
	err := chargeB(step)
	var spent *ErrDailyBudget
	if !errors.As(err, &spent) || !strings.Contains(err.Error(), dailyKey) || !strings.Contains(err.Error(), "00:00 UTC") {
		t.Fatalf("the charge past the budget = %v; want ErrDailyBudget naming the key and the reset", err)
	}
	for name, allow := range map[string]func() error{"A": allowA, "B": allowB} {
		if err := allow(); !errors.As(err, &spent) {
			t.Errorf("replica %s allows more once the budget is spent: %v", name, err)
		}
	}
	if err := allowOther(); err != nil {
		t.Errorf("another installation is refused: %v", err)
	}
	now = now.Add(time.Hour) // 00:00 UTC the next day
	if err := allowA(); err != nil {
		t.Errorf("the next UTC day is still refused: %v", err)
	}
}

// A run of a pipeline with agent nodes that starts while its
// installation's daily budget is spent says so in a note; one without
// agent nodes, or with budget left, does not.
func TestDailyBudgetNote(t *testing.T) {
	q, err := queue.Open(context.Background(), queue.Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Close() })
	ctx, log := context.Background(), slog.New(slog.DiscardHandler)
	now := time.Date(2026, 5, 6, 12, 0, 0, 0, time.UTC)
	d := DailyBudget{MaxUSD: 2, Store: q, Now: func() time.Time { return now }}
	load := func(body string) *attractor.Pipeline {
		p, ds, err := attractor.Load("p.dot", []byte("digraph p {\n start [shape=Mdiamond]\n exit [shape=Msquare]\n"+body+"\n}\n"))
		if err != nil {
			t.Fatalf("%v\n%v", err, ds)
		}
		return p
	}
	agentic := load(`fix [shape=box, prompt="x"]` + "\n start -> fix -> exit")
	plain := load(`t [shape=parallelogram, tool_command="true"]` + "\n start -> t -> exit")
	if notes := d.note(ctx, log, 5, agentic); notes != nil {
		t.Errorf("with budget left: %q", notes)
	}
	if _, err := q.AddSpend(ctx, 5, queue.SpendDay(now), 2.5, 1); err != nil {
		t.Fatal(err)
	}
	if notes := d.note(ctx, log, 5, agentic); len(notes) != 1 || !strings.Contains(notes[0], dailyKey) || !strings.Contains(notes[0], "00:00 UTC") {
		t.Errorf("spent, with agent nodes: %q", notes)
	}
	if notes := d.note(ctx, log, 5, plain); notes != nil {
		t.Errorf("spent, without agent nodes: %q", notes)
	}
}
