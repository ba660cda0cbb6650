package queue

import (
	"context"
	"fmt"
	"time"
)

// Agent spend per installation and UTC day, in the shared database, so
// that the server's daily budget per installation (agents.budgets.
// per_installation_daily_usd) holds across every replica: each increment
// of a run's agent cost is added in one statement, which returns the
// day's new total, and a new UTC day starts a new row.

func spendSchema() []string {
	return []string{
		`CREATE TABLE IF NOT EXISTS agent_spend (
	installation_id BIGINT NOT NULL,
	day TEXT NOT NULL,            -- YYYY-MM-DD, UTC
	usd DOUBLE PRECISION NOT NULL DEFAULT 0,
	tokens BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (installation_id, day)
)`,
	}
}

const (
	addSpendSQL = `INSERT INTO agent_spend (installation_id, day, usd, tokens) VALUES (?, ?, ?, ?)
		ON CONFLICT (installation_id, day) DO UPDATE SET usd = agent_spend.usd + excluded.usd, tokens = agent_spend.tokens + excluded.tokens
		RETURNING usd`
	spendSQL      = `SELECT usd FROM agent_spend WHERE installation_id = ? AND day = ?`
	pruneSpendSQL = `DELETE FROM agent_spend WHERE day < ?`
)

// SpendDay is the UTC day of t as the spend table keys it.
func SpendDay(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// AddSpend adds usd and tokens to the installation's spend of day and
// returns the day's total in dollars after it.
func (q *Queue) AddSpend(ctx context.Context, installation int64, day string, usd float64, tokens int64) (float64, error) {
	op := fmt.Sprintf("agent spend of installation %d on %s", installation, day)
	r, err := q.eng.pool().query(ctx, q.d.rebind(addSpendSQL), installation, day, usd, tokens)
	if err != nil {
		return 0, unavailable(op, err)
	}
	defer r.Close()
	var total float64
	for r.Next() {
		if err := r.Scan(&total); err != nil {
			return 0, unavailable(op, err)
		}
	}
	if err := r.Err(); err != nil {
		return 0, unavailable(op, err)
	}
	return total, nil
}

// Spend is the installation's agent spend of day in dollars.
func (q *Queue) Spend(ctx context.Context, installation int64, day string) (float64, error) {
	op := fmt.Sprintf("agent spend of installation %d on %s", installation, day)
	r, err := q.eng.pool().query(ctx, q.d.rebind(spendSQL), installation, day)
	if err != nil {
		return 0, unavailable(op, err)
	}
	defer r.Close()
	var total float64
	for r.Next() {
		if err := r.Scan(&total); err != nil {
			return 0, unavailable(op, err)
		}
	}
	return total, errOr(op, r.Err())
}

// PruneSpend forgets the spend of days before day.
func (q *Queue) PruneSpend(ctx context.Context, before string) error {
	if _, err := q.eng.pool().exec(ctx, q.d.rebind(pruneSpendSQL), before); err != nil {
		return unavailable("prune agent spend", err)
	}
	return nil
}
