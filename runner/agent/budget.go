package agent

import (
	"errors"
	"fmt"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// Budgets (DESIGN §6): the engine hands every attempt the run's usage
// meter, with the run's budget. An attempt does not start once a budget is
// reached; while it runs it spends into the meter as its backend reports
// usage (the API loop after each model call, Claude Code per message of
// its stream) and stops before a step that would pass the budget,
// estimating the step as the last model call again. CLIs that report
// usage only when they end (Codex, Gemini) are held to the budget between
// attempts.

// budgetGate refuses an attempt the run cannot afford, or whose cost a
// cost budget could not see.
func (a *Agent) budgetGate(req attractor.AgentRequest, sel selection) *attractor.Outcome {
	m := req.Usage
	if m == nil {
		return nil
	}
	b := m.Budget()
	key := b.CostKey
	if b.MaxCostUSD <= 0 {
		key = b.DailyKey
	}
	if key != "" && (sel.b.Kind != KindCLI || sel.b.CLI != CLIClaude) {
		if _, ok := sel.b.price(sel.model); !ok {
			return structural(fmt.Sprintf("%s caps agent cost, and agent backend %s reports no cost for model %q: "+
				"set agents.backends.%s.prices (US dollars per million tokens; doublestar patterns over model names)",
				key, sel.name, sel.model, sel.name))
		}
	}
	if be := m.Over(attractor.Usage{}); be != nil {
		o := budgetFailure(be, "did not start")
		return &o
	}
	return nil
}

// budgetFailure is the outcome of an attempt a budget stopped: how it
// was stopped, the budget and its key.
func budgetFailure(be *attractor.BudgetError, how string) attractor.Outcome {
	o := failure(attractor.ClassBudgetExhausted, fmt.Sprintf("agent %s: %v", how, be))
	o.Meta = map[string]any{attractor.MetaBudgetLimited: true}
	return o
}

// spendErr is the budget error of a refused Spend, or nil.
func spendErr(err error) *attractor.BudgetError {
	var be *attractor.BudgetError
	if errors.As(err, &be) {
		return be
	}
	return nil
}
