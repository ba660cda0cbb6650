package checks

import (
	"fmt"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// Agent usage on the checks (DESIGN §6): every agent attempt's usage is
// summed per node and per run as the recorder hears the attempts; the
// summary check shows a table of the nodes that used any and the run's
// total, a node check its node's line, the terminal summary one line.
// A run an agent budget stopped is called budget-limited.

// addUsage counts an attempt's usage in its node and the run.
func (v *RunView) addUsage(n *NodeView, o attractor.Outcome) {
	if o.Usage != nil {
		n.Usage.Add(*o.Usage)
		v.Usage.Add(*o.Usage)
	}
	if b, _ := o.Meta[attractor.MetaBudgetLimited].(bool); b {
		v.BudgetLimited = true
	}
}

// usageSection is the summary's "Agent usage" table, or "" when no agent
// ran.
func usageSection(v *RunView) string {
	if v.Usage.Attempts == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("### Agent usage\n\n")
	if v.BudgetLimited {
		b.WriteString("**Budget-limited:** an agent budget stopped this run; " + cell(clip(budgetReason(v), 300)) + "\n\n")
	}
	b.WriteString("| Node | Attempts | Input | Cache read | Cache write | Output | Cost |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|\n")
	for _, n := range RunOrder(v.Nodes) {
		if n.Usage.Attempts == 0 {
			continue
		}
		b.WriteString(usageRow(codeCell(n.ID), n.Usage))
	}
	b.WriteString(usageRow("**Total**", v.Usage))
	if v.Usage.Uncosted > 0 {
		fmt.Fprintf(&b, "\n_%s of unknown cost: their backend reports none and has no `prices` for the model; the cost counts the rest._\n",
			plural(v.Usage.Uncosted, "attempt"))
	}
	return b.String() + "\n"
}

func usageRow(name string, t attractor.UsageTotal) string {
	return fmt.Sprintf("| %s | %d | %s | %s | %s | %s | %s |\n", name, t.Attempts,
		attractor.Thousands(t.InputTokens), attractor.Thousands(t.CacheReadTokens), attractor.Thousands(t.CacheWriteTokens),
		attractor.Thousands(t.OutputTokens), totalCost(t))
}

// totalCost is a total's cost, or what it leaves out.
func totalCost(t attractor.UsageTotal) string {
	switch {
	case t.Uncosted == t.Attempts:
		return "unknown"
	case t.Uncosted > 0:
		return attractor.USD(t.CostUSD) + " + unknown"
	}
	return attractor.USD(t.CostUSD)
}

// budgetReason is the reason of the node a budget stopped.
func budgetReason(v *RunView) string {
	for _, n := range v.Nodes {
		if b, _ := n.Outcome.Meta[attractor.MetaBudgetLimited].(bool); b {
			return code(n.ID) + ": " + firstLine(n.Outcome.FailureReason)
		}
	}
	return firstLine(v.Reason)
}

// usageFact is a node check's usage line, or "".
func usageFact(n *NodeView) string {
	if n.Usage.Attempts == 0 {
		return ""
	}
	return "Agent usage: " + n.Usage.String()
}

// budgetTitle leads the title of a budget-limited run.
func budgetTitle(v *RunView) string {
	if v.BudgetLimited {
		return "budget-limited · "
	}
	return ""
}

// seedUsage sets a node's usage from before a resume, and counts it in
// the run's.
func (v *RunView) seedUsage(n *NodeView, u attractor.UsageTotal) {
	v.Usage.Merge(u)
	n.Usage = u
	if b, _ := n.Outcome.Meta[attractor.MetaBudgetLimited].(bool); b {
		v.BudgetLimited = true
	}
}
