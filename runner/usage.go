package runner

import (
	"fmt"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// newMeter is the run's agent usage meter: it starts at what the run had
// spent when it was interrupted (a resume), with the budget its limits
// set, naming the key each cap comes from.
func (p *Prepared) newMeter(o LocalOptions) *attractor.UsageMeter {
	var seed attractor.UsageTotal
	if p.cp.Usage != nil {
		seed = *p.cp.Usage
	}
	l := p.cp.Limits
	if o.CapBudgets != nil {
		for _, note := range o.CapBudgets(&l) {
			if o.Live != nil {
				fmt.Fprintf(o.Live, "kilroy: %s\n", note)
			}
		}
	}
	b := attractor.Budget{
		MaxCostUSD: l.MaxCostUSD, CostKey: or(l.MaxCostUSDFrom, "limits.max_cost_usd in "+ConfigPath),
		MaxTokens: l.MaxTokens, TokensKey: or(l.MaxTokensFrom, "limits.max_tokens in "+ConfigPath),
		Charge: o.ChargeUsage, Allow: o.AllowUsage, DailyKey: o.DailyBudgetKey,
	}
	return attractor.NewUsageMeter(seed, b)
}

// noteUsage puts the run's usage so far in checkpoint.json's header.
func (p *Prepared) noteUsage() {
	if p.usage == nil {
		return
	}
	if t := p.usage.Total(); t.Attempts > 0 || t.Tokens() > 0 {
		p.cp.Usage = &t
	}
}

func or(s, def string) string {
	if s != "" {
		return s
	}
	return def
}
