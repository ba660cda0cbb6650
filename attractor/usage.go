package attractor

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Usage is what one agent attempt consumed, as its backend reported it.
// Token kinds are disjoint: InputTokens are the uncached input tokens,
// so the four add up to everything the provider billed.
type Usage struct {
	Backend          string `json:"backend,omitempty"`
	Provider         string `json:"provider,omitempty"`
	Model            string `json:"model,omitempty"`
	InputTokens      int64  `json:"input_tokens"`
	OutputTokens     int64  `json:"output_tokens"`
	CacheReadTokens  int64  `json:"cache_read_tokens"`
	CacheWriteTokens int64  `json:"cache_write_tokens"`
	// CostUSD is known when CostSource is CostReported (the CLI said) or
	// CostPriced (from the backend's configured prices); otherwise the
	// attempt's cost is unknown, not zero.
	CostUSD    float64    `json:"cost_usd"`
	CostSource CostSource `json:"cost_source"`
}

// CostSource says where an attempt's cost comes from.
type CostSource string

const (
	CostReported CostSource = "reported" // the agent CLI reported it
	CostPriced   CostSource = "priced"   // tokens times the configured prices
	CostUnknown  CostSource = "unknown"  // no report, no price: tokens only
)

// Tokens is every token of u.
func (u Usage) Tokens() int64 {
	return u.InputTokens + u.OutputTokens + u.CacheReadTokens + u.CacheWriteTokens
}

// Costed reports whether u's cost is known.
func (u Usage) Costed() bool { return u.CostSource == CostReported || u.CostSource == CostPriced }

// UsageTotal sums the usage of many attempts (a node, a run).
type UsageTotal struct {
	Attempts         int     `json:"attempts"`
	InputTokens      int64   `json:"input_tokens"`
	OutputTokens     int64   `json:"output_tokens"`
	CacheReadTokens  int64   `json:"cache_read_tokens"`
	CacheWriteTokens int64   `json:"cache_write_tokens"`
	CostUSD          float64 `json:"cost_usd"`
	// Uncosted counts the attempts whose cost is unknown: CostUSD leaves
	// them out.
	Uncosted int `json:"uncosted_attempts"`
}

// Add counts one attempt's usage in t.
func (t *UsageTotal) Add(u Usage) {
	t.Attempts++
	t.addTokens(u)
	if u.Costed() {
		t.CostUSD += u.CostUSD
	} else {
		t.Uncosted++
	}
}

func (t *UsageTotal) addTokens(u Usage) {
	t.InputTokens += u.InputTokens
	t.OutputTokens += u.OutputTokens
	t.CacheReadTokens += u.CacheReadTokens
	t.CacheWriteTokens += u.CacheWriteTokens
}

// Tokens is every token of t.
func (t UsageTotal) Tokens() int64 {
	return t.InputTokens + t.OutputTokens + t.CacheReadTokens + t.CacheWriteTokens
}

// Budget caps a run's agent usage. A zero field is no cap. The keys name
// the setting each cap comes from, for the failure reason.
type Budget struct {
	MaxCostUSD float64
	CostKey    string // e.g. "limits.max_cost_usd in .kilroy/config.yml"
	MaxTokens  int64
	TokensKey  string
	// Charge, when set, is told of every increment of spend and may refuse
	// further spending (the server's daily budget per installation). Its
	// error ends the attempt as budget_exhausted.
	Charge func(delta Usage) error
	// Allow, when set, is asked before every step whether spending may go
	// on (the daily budget again, as other runs spend it); its error ends
	// the attempt, or keeps it from starting, as budget_exhausted.
	Allow func() error
	// CostKey names a budget in dollars the host holds the run to besides
	// MaxCostUSD (the daily one), so that an agent whose cost cannot be
	// known is refused: "" for none.
	DailyKey string
}

// MetaBudgetLimited is the Outcome.Meta key (true) of an agent attempt a
// budget stopped; reports call the run budget-limited.
const MetaBudgetLimited = "budget_limited"

// BudgetError is a budget a run reached: which, its limit, and what the
// run had spent.
type BudgetError struct {
	What  string // "cost" or "tokens"
	Key   string
	Limit float64
	Spent float64
	// Next: the budget is not reached yet, but the next step as estimated
	// would pass it.
	Next bool
	Err  error // a refusal from Budget.Charge
}

func (e *BudgetError) Error() string {
	how := "is reached"
	if e.Next {
		how = "would be passed by the next model call"
	}
	switch {
	case e.Err != nil:
		return e.Err.Error()
	case e.What == "cost":
		return fmt.Sprintf("the run's agent cost budget of %s (%s) %s: %s spent", USD(e.Limit), e.Key, how, USD(e.Spent))
	}
	return fmt.Sprintf("the run's agent token budget of %s tokens (%s) %s: %s spent", Thousands(int64(e.Limit)), e.Key, how, Thousands(int64(e.Spent)))
}

// UsageMeter is a run's agent usage as it happens, shared by the run's
// agent attempts (parallel branches too): agents add what they use as
// their backend reports it, and ask before each step whether the next
// would pass the budget.
type UsageMeter struct {
	mu     sync.Mutex
	total  UsageTotal
	budget Budget
}

// NewUsageMeter starts a meter at seed (what a resumed run had spent)
// with budget b.
func NewUsageMeter(seed UsageTotal, b Budget) *UsageMeter {
	return &UsageMeter{total: seed, budget: b}
}

// Budget is the meter's budget.
func (m *UsageMeter) Budget() Budget {
	if m == nil {
		return Budget{}
	}
	return m.budget
}

// Total is the usage so far.
func (m *UsageMeter) Total() UsageTotal {
	if m == nil {
		return UsageTotal{}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.total
}

// Spend adds an increment of an attempt's usage (tokens and, when known,
// cost) without counting an attempt, and tells Budget.Charge.
func (m *UsageMeter) Spend(delta Usage) error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	m.total.addTokens(delta)
	if delta.Costed() {
		m.total.CostUSD += delta.CostUSD
	}
	charge := m.budget.Charge
	m.mu.Unlock()
	if charge != nil {
		if err := charge(delta); err != nil {
			return &BudgetError{Err: err}
		}
	}
	return nil
}

// Finish counts a finished attempt whose usage was spent already: its
// attempt, and whether its cost was known.
func (m *UsageMeter) Finish(u Usage) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.total.Attempts++
	if !u.Costed() {
		m.total.Uncosted++
	}
}

// Over returns the budget the run would pass if it spent next on top of
// what it has, or nil. next is the caller's estimate of its next step
// (the last model call's usage); a zero next asks whether a budget is
// already reached.
func (m *UsageMeter) Over(next Usage) *BudgetError {
	if m == nil {
		return nil
	}
	if allow := m.budget.Allow; allow != nil {
		if err := allow(); err != nil {
			return &BudgetError{Err: err}
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	b, t := m.budget, m.total
	if b.MaxTokens > 0 && t.Tokens()+next.Tokens() > b.MaxTokens || b.MaxTokens > 0 && t.Tokens() >= b.MaxTokens {
		return &BudgetError{What: "tokens", Key: b.TokensKey, Limit: float64(b.MaxTokens), Spent: float64(t.Tokens()),
			Next: t.Tokens() < b.MaxTokens}
	}
	if b.MaxCostUSD > 0 && (t.CostUSD+next.CostUSD > b.MaxCostUSD || t.CostUSD >= b.MaxCostUSD) {
		return &BudgetError{What: "cost", Key: b.CostKey, Limit: b.MaxCostUSD, Spent: t.CostUSD, Next: t.CostUSD < b.MaxCostUSD}
	}
	return nil
}

// String is u in a few words: its tokens and cost, or that the cost is
// unknown.
func (u Usage) String() string {
	s := Thousands(u.Tokens()) + " tokens"
	if u.Costed() {
		return s + ", " + USD(u.CostUSD)
	}
	return s + ", cost unknown"
}

// String is t in a few words: tokens, cost, and how many attempts the
// cost leaves out.
func (t UsageTotal) String() string {
	s := Thousands(t.Tokens()) + " tokens"
	switch {
	case t.Uncosted == 0:
		return s + ", " + USD(t.CostUSD)
	case t.Uncosted == t.Attempts:
		return s + ", cost unknown (no price configured)"
	}
	return fmt.Sprintf("%s, %s + %d attempt(s) of unknown cost", s, USD(t.CostUSD), t.Uncosted)
}

// USD writes dollars: with cents from a dollar up, to four places below.
func USD(v float64) string {
	if v < 1 && v > -1 {
		return fmt.Sprintf("$%.4f", v)
	}
	return fmt.Sprintf("$%.2f", v)
}

// Thousands writes n with a comma every three digits.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 || len(s) <= 3 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Unwrap is the refusal of Budget.Charge or Budget.Allow, if that was it.
func (e *BudgetError) Unwrap() error { return e.Err }

// Merge adds the total o to t.
func (t *UsageTotal) Merge(o UsageTotal) {
	t.Attempts += o.Attempts
	t.InputTokens += o.InputTokens
	t.OutputTokens += o.OutputTokens
	t.CacheReadTokens += o.CacheReadTokens
	t.CacheWriteTokens += o.CacheWriteTokens
	t.CostUSD += o.CostUSD
	t.Uncosted += o.Uncosted
}
