package server

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/runner"
	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
)

// Server caps. A repository's configuration chooses its run and node
// timeouts, but the server's operator bounds them (server policy
// `limits.max_run_timeout`, `limits.max_node_timeout`): a value above the
// maximum runs with the maximum, and the summary check says so, so that
// `run_timeout: 100000d` cannot hold a worker for ever.

// Caps are the server's maximum timeouts; zero means no maximum. Graph
// bounds the size of every pipeline the server loads (attractor's
// defaults for zero), MaxPipelines the pipelines of one configuration
// (zero: no bound): a configuration naming one big graph as many
// pipelines would otherwise multiply its cost.
type Caps struct {
	MaxRunTimeout  time.Duration
	MaxNodeTimeout time.Duration
	// MaxRunCostUSD and MaxRunTokens cap a run's agents (budget.go).
	MaxRunCostUSD float64
	MaxRunTokens  int64
	// BudgetFile names where the budgets come from when not the server
	// policy (a local run's --agents file).
	BudgetFile   string
	Graph        attractor.GraphCaps
	MaxPipelines int
	// Checkout bounds the tree of a run's head, measured before the bot
	// checks it out (zero: no bound).
	Checkout gitops.TreeLimits
}

// checkoutTooLarge says why a run's head was not checked out, naming
// the setting that refused it.
func checkoutTooLarge(tl *gitops.TreeTooLargeError) error {
	setting := "limits.max_checkout_bytes"
	if tl.FilesOver() {
		setting = "limits.max_checkout_files"
	}
	return fmt.Errorf("nothing was checked out: %w, over this server's limit (server policy %s); "+
		"a pull request this large is refused before its files are written", tl, setting)
}

// tooManyPipelines says why a configuration with n pipelines is refused,
// or "" when it is within the cap.
func (c Caps) tooManyPipelines(n int) string {
	if c.MaxPipelines <= 0 || n <= c.MaxPipelines {
		return ""
	}
	return fmt.Sprintf("%d pipelines, more than this server's limit of %d per configuration (server policy limits.max_pipelines): "+
		"merge pipelines, or move some to another repository", n, c.MaxPipelines)
}

// clamp bounds sel's limits and node timeouts by c, and returns the notes
// for the summary check that say what was lowered. sel's configuration is
// copied, not changed in place.
func (c Caps) clamp(sel *runner.Selection) []string {
	var notes []string
	cfg := *sel.Config
	if m := c.MaxRunTimeout; m > 0 && cfg.Limits.RunTimeout > m {
		notes = append(notes, fmt.Sprintf("`limits.run_timeout` of %s in %s is above this server's maximum; the run may take %s.",
			cfg.Limits.RunTimeout, runner.ConfigPath, m))
		cfg.Limits.RunTimeout = m
	}
	if m := c.MaxNodeTimeout; m > 0 {
		// Nodes without a timeout of their own have the configured one
		// (applyLimits); its note covers them.
		inherited := cfg.Limits.NodeTimeout
		if cfg.Limits.NodeTimeout > m {
			notes = append(notes, fmt.Sprintf("`limits.node_timeout` of %s in %s is above this server's maximum; nodes may take %s.",
				cfg.Limits.NodeTimeout, runner.ConfigPath, m))
			cfg.Limits.NodeTimeout = m
		}
		var lowered []string
		for _, n := range sel.Pipeline.Nodes {
			if n.Timeout > m {
				if n.Timeout != inherited {
					lowered = append(lowered, "`"+n.ID+"`")
				}
				n.Timeout = m
			}
		}
		if len(lowered) > 0 {
			slices.Sort(lowered)
			notes = append(notes, fmt.Sprintf("The `timeout` of %s in %s is above this server's maximum of %s, which %s instead.",
				joinList(lowered), sel.GraphPath, m, plural(len(lowered), "it gets", "they get")))
		}
	}
	notes = append(notes, c.ClampBudgets(&cfg.Limits)...)
	sel.Config = &cfg
	return notes
}

func joinList(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}
