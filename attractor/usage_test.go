package attractor

import (
	"errors"
	"strings"
	"testing"
)

// The meter sums what attempts spend, counts attempts and those of
// unknown cost, and says when a budget is reached or the next step, as
// estimated, would pass it; a nil meter meters nothing.
func TestUsageMeter(t *testing.T) {
	m := NewUsageMeter(UsageTotal{Attempts: 1, InputTokens: 100, CostUSD: 0.5},
		Budget{MaxTokens: 1000, TokensKey: "tokens key", MaxCostUSD: 1, CostKey: "cost key"})
	step := Usage{InputTokens: 300, OutputTokens: 100, CostUSD: 0.1, CostSource: CostPriced}
	if err := m.Spend(step); err != nil {
		t.Fatal(err)
	}
	m.Finish(step)
	m.Finish(Usage{CostSource: CostUnknown})
	want := UsageTotal{Attempts: 3, InputTokens: 400, OutputTokens: 100, CostUSD: 0.6, Uncosted: 1}
	if got := m.Total(); got != want {
		t.Errorf("total %+v, want %+v", got, want)
	}
	if be := m.Over(step); be != nil {
		t.Errorf("500 + 400 of 1000 tokens, $0.70 of $1: %v", be)
	}
	be := m.Over(Usage{InputTokens: 600})
	if be == nil || be.What != "tokens" || !be.Next || !strings.Contains(be.Error(), "tokens key") || !strings.Contains(be.Error(), "would be passed") {
		t.Errorf("a step past the token budget: %+v", be)
	}
	_ = m.Spend(Usage{CostUSD: 0.5, CostSource: CostReported})
	be = m.Over(Usage{})
	if be == nil || be.What != "cost" || be.Next || !strings.Contains(be.Error(), "cost key") || !strings.Contains(be.Error(), "is reached") {
		t.Errorf("a reached cost budget: %+v", be)
	}

	refused := errors.New("daily budget spent")
	d := NewUsageMeter(UsageTotal{}, Budget{Charge: func(Usage) error { return refused }, Allow: func() error { return refused }})
	if err := d.Spend(step); !errors.Is(err, refused) {
		t.Errorf("Spend with a refusing charge = %v", err)
	}
	if be := d.Over(Usage{}); be == nil || !errors.Is(be.Err, refused) {
		t.Errorf("Over with a refusing allow = %v", be)
	}

	var none *UsageMeter
	if none.Spend(step) != nil || none.Over(step) != nil || none.Total() != (UsageTotal{}) {
		t.Error("a nil meter metered something")
	}
	none.Finish(step)
}
