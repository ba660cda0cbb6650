package server

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/policy"
	"github.com/kilroy-bot/kilroy-bot/queue"
	"github.com/kilroy-bot/kilroy-bot/runner"
)

// Agent budgets of the server (server policy agents.budgets): per-run caps
// over the repository's limits.max_cost_usd and limits.max_tokens, like
// the timeout caps (a repository asking for more runs with the server's,
// and the summary says so), and a daily budget per installation kept in
// the shared database, so that it holds across replicas.

// Budget caps, keys as the failure reasons and notes name them.
const (
	perRunUSDKey    = "agents.budgets.per_run_usd in the server policy"
	perRunTokensKey = "agents.budgets.per_run_tokens in the server policy"
	dailyKey        = "agents.budgets.per_installation_daily_usd in the server policy"
)

// budgetKey is the key of a cap from c's budget file (BudgetFile, else
// the server policy).
func (c Caps) budgetKey(serverKey string) string {
	if c.BudgetFile == "" {
		return serverKey
	}
	return strings.Replace(serverKey, "the server policy", c.BudgetFile, 1)
}

// whose is whose budget a note says the repository's value is above.
func (c Caps) whose() string {
	if c.BudgetFile == "" {
		return "this server's budget"
	}
	return "the budget in " + c.BudgetFile
}

// ClampBudgets caps l's agent budgets by c and says what it lowered.
func (c Caps) ClampBudgets(l *policy.Limits) []string {
	var notes []string
	if m := c.MaxRunCostUSD; m > 0 && (l.MaxCostUSD <= 0 || l.MaxCostUSD > m) {
		if l.MaxCostUSD > m {
			notes = append(notes, fmt.Sprintf("`limits.max_cost_usd` of %s in %s is above %s; the run's agents may cost %s.",
				attractor.USD(l.MaxCostUSD), runner.ConfigPath, c.whose(), attractor.USD(m)))
		}
		l.MaxCostUSD, l.MaxCostUSDFrom = m, c.budgetKey(perRunUSDKey)
	}
	if m := c.MaxRunTokens; m > 0 && (l.MaxTokens <= 0 || l.MaxTokens > m) {
		if l.MaxTokens > m {
			notes = append(notes, fmt.Sprintf("`limits.max_tokens` of %s in %s is above %s; the run's agents may use %s tokens.",
				attractor.Thousands(l.MaxTokens), runner.ConfigPath, c.whose(), attractor.Thousands(m)))
		}
		l.MaxTokens, l.MaxTokensFrom = m, c.budgetKey(perRunTokensKey)
	}
	return notes
}

// SpendStore keeps each installation's agent spend per UTC day where
// every replica sees it (the queue's database).
type SpendStore interface {
	AddSpend(ctx context.Context, installation int64, day string, usd float64, tokens int64) (float64, error)
	Spend(ctx context.Context, installation int64, day string) (float64, error)
}

// DailyBudget is the daily agent budget of every installation.
type DailyBudget struct {
	MaxUSD float64 // 0: none
	Store  SpendStore
	Now    func() time.Time // nil: time.Now
}

// ErrDailyBudget is the error of a spent daily budget.
type ErrDailyBudget struct {
	Installation int64
	Limit, Spent float64
}

func (e *ErrDailyBudget) Error() string {
	return fmt.Sprintf("installation %d's daily agent budget of %s (%s) is spent: %s today; it starts afresh at 00:00 UTC",
		e.Installation, attractor.USD(e.Limit), dailyKey, attractor.USD(e.Spent))
}

// hooks are the run's Budget.Charge and Budget.Allow for installation:
// every increment of cost is added to the day's spend, which refuses more
// once it reaches the budget. A store that cannot be read is logged and
// lets the run go on: the per-run budgets still hold.
func (d DailyBudget) hooks(ctx context.Context, log *slog.Logger, installation int64) (charge func(attractor.Usage) error, allow func() error) {
	if d.MaxUSD <= 0 || d.Store == nil {
		return nil, nil
	}
	now := d.Now
	if now == nil {
		now = time.Now
	}
	check := func(total float64) error {
		if total >= d.MaxUSD {
			return &ErrDailyBudget{Installation: installation, Limit: d.MaxUSD, Spent: total}
		}
		return nil
	}
	charge = func(u attractor.Usage) error {
		usd := 0.0
		if u.Costed() {
			usd = u.CostUSD
		}
		total, err := d.Store.AddSpend(ctx, installation, queue.SpendDay(now()), usd, u.Tokens())
		if err != nil {
			log.Warn("agent spend not recorded", "installation", installation, "err", err)
			return nil
		}
		return check(total)
	}
	allow = func() error {
		total, err := d.Store.Spend(ctx, installation, queue.SpendDay(now()))
		if err != nil {
			log.Warn("agent spend not read", "installation", installation, "err", err)
			return nil
		}
		return check(total)
	}
	return charge, allow
}

// key names the daily budget when there is one.
func (d DailyBudget) key() string {
	if d.MaxUSD <= 0 || d.Store == nil {
		return ""
	}
	return dailyKey
}

// note is the summary's note for a run of p that starts while its
// installation's daily budget is spent: its agent nodes will not run
// before the day turns. None when p has no agent node or the budget is
// not spent.
func (d DailyBudget) note(ctx context.Context, log *slog.Logger, installation int64, p *attractor.Pipeline) []string {
	if d.MaxUSD <= 0 || d.Store == nil || p == nil {
		return nil
	}
	agents := false
	for _, n := range p.Nodes {
		agents = agents || n.Kind == attractor.KindCodergen
	}
	if !agents {
		return nil
	}
	_, allow := d.hooks(ctx, log, installation)
	if err := allow(); err != nil {
		return []string{"This run's agent nodes will not run: " + err.Error() + "."}
	}
	return nil
}
