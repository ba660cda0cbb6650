package metrics

import (
	"context"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// Agent usage series, fed by UsageListener from every agent attempt's
// Outcome.Usage:
//
//   - kilroy_agent_tokens_total{installation,repository,pipeline,backend,model,kind}
//     with kind input, output, cache_read or cache_write;
//   - kilroy_agent_cost_usd_total{installation,repository,pipeline,backend,model}:
//     the cost of the attempts whose cost is known;
//   - kilroy_agent_attempts_total{installation,repository,pipeline,backend,model,cost}:
//     attempts, with cost "known" or "unknown" (no report, no price).
//
// Installations and repositories are the App's own; pipeline, backend and
// model names come from configuration, and a repository's configuration
// may name many: each label keeps at most maxLabelValues distinct values
// per server, later ones count as "other".
const (
	NameAgentTokens   = "kilroy_agent_tokens_total"
	NameAgentCost     = "kilroy_agent_cost_usd_total"
	NameAgentAttempts = "kilroy_agent_attempts_total"
)

// maxLabelValues bounds the distinct values of each usage label.
const maxLabelValues = 200

var usageLabels = []string{"installation", "repository", "pipeline", "backend", "model"}

// agentSeries are the usage collectors.
type agentSeries struct {
	tokens, cost, attempts *prometheus.CounterVec

	mu   sync.Mutex
	seen map[string]map[string]bool // label → values given out
}

func newAgentSeries() *agentSeries {
	return &agentSeries{
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameAgentTokens,
			Help: "Tokens coding agents used, by installation, repository, pipeline, backend, model and kind (input, output, cache_read, cache_write)."},
			append(usageLabels[:len(usageLabels):len(usageLabels)], "kind")),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameAgentCost,
			Help: "US dollars coding agents cost (reported by the CLI or from configured prices), by installation, repository, pipeline, backend and model."},
			usageLabels),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameAgentAttempts,
			Help: "Coding agent attempts by installation, repository, pipeline, backend, model and whether their cost is known."},
			append(usageLabels[:len(usageLabels):len(usageLabels)], "cost")),
		seen: map[string]map[string]bool{},
	}
}

func (s *agentSeries) collectors() []prometheus.Collector {
	return []prometheus.Collector{s.tokens, s.cost, s.attempts}
}

// bound returns v, or "other" once label has maxLabelValues others.
func (s *agentSeries) bound(label, v string) string {
	if v == "" {
		return "none"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	vs := s.seen[label]
	if vs == nil {
		vs = map[string]bool{}
		s.seen[label] = vs
	}
	if vs[v] {
		return v
	}
	if len(vs) >= maxLabelValues {
		return "other"
	}
	vs[v] = true
	return v
}

// RunLabels say whose run a UsageListener counts.
type RunLabels struct {
	Installation int64
	Repository   string // owner/name
	Pipeline     string
}

// UsageListener counts the agent usage of one run's attempts.
type UsageListener struct {
	attractor.NopListener
	s *agentSeries
	l RunLabels
}

// UsageListener returns the listener that counts one run's agent usage.
func (m *Metrics) UsageListener(l RunLabels) *UsageListener {
	return &UsageListener{s: m.agents, l: l}
}

// AttemptFinished counts an agent attempt's usage.
func (u *UsageListener) AttemptFinished(_ context.Context, ev attractor.AttemptFinished) error {
	use := ev.Outcome.Usage
	if use == nil {
		return nil
	}
	s := u.s
	labels := []string{s.bound("installation", strconv.FormatInt(u.l.Installation, 10)), s.bound("repository", u.l.Repository),
		s.bound("pipeline", u.l.Pipeline), s.bound("backend", use.Backend), s.bound("model", use.Model)}
	for kind, n := range map[string]int64{"input": use.InputTokens, "output": use.OutputTokens,
		"cache_read": use.CacheReadTokens, "cache_write": use.CacheWriteTokens} {
		if n > 0 {
			s.tokens.WithLabelValues(append(labels, kind)...).Add(float64(n))
		}
	}
	known := "unknown"
	if use.Costed() {
		known = "known"
		if use.CostUSD > 0 {
			s.cost.WithLabelValues(labels...).Add(use.CostUSD)
		}
	}
	s.attempts.WithLabelValues(append(labels, known)...).Inc()
	return nil
}
