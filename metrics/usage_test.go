package metrics_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/metrics"
)

// Agent usage counts by installation, repository, pipeline, backend and
// model: tokens by kind, the cost of attempts whose cost is known, and
// attempts by whether it is; a model name past the label bound is "other".
func TestUsageListener(t *testing.T) {
	m, reg := newMetrics(t, metrics.Options{})
	ctx := context.Background()
	l := m.UsageListener(metrics.RunLabels{Installation: 42, Repository: "acme/app", Pipeline: "fix"})
	a := attractor.Usage{Backend: "claude", Model: "claude-sonnet-4-5", InputTokens: 1000, OutputTokens: 200, CacheReadTokens: 3000,
		CacheWriteTokens: 500, CostUSD: 0.25, CostSource: attractor.CostReported}
	b := attractor.Usage{Backend: "codex", Model: "gpt-5", InputTokens: 700, OutputTokens: 70, CostSource: attractor.CostUnknown}
	for _, u := range []attractor.Usage{a, a, b} {
		if err := l.AttemptFinished(ctx, attractor.AttemptFinished{Outcome: attractor.Outcome{Status: attractor.StatusSuccess, Usage: &u}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.AttemptFinished(ctx, attractor.AttemptFinished{Outcome: attractor.Outcome{Status: attractor.StatusSuccess}}); err != nil {
		t.Fatal(err)
	}
	got := exposition(t, reg)
	// series is an exposition line: labels in name order, as gathered.
	series := func(name string, u attractor.Usage, extra map[string]string, v float64) string {
		l := map[string]string{"installation": "42", "repository": "acme/app", "pipeline": "fix", "backend": u.Backend, "model": u.Model}
		maps.Copy(l, extra)
		var b strings.Builder
		b.WriteString(name)
		for _, k := range slices.Sorted(maps.Keys(l)) {
			b.WriteString(" " + k + "=" + l[k])
		}
		return b.String() + " " + strconv.FormatFloat(v, 'g', -1, 64)
	}
	kind := func(k string) map[string]string { return map[string]string{"kind": k} }
	for _, want := range []string{
		series(metrics.NameAgentTokens, a, kind("input"), float64(2*a.InputTokens)),
		series(metrics.NameAgentTokens, a, kind("cache_read"), float64(2*a.CacheReadTokens)),
		series(metrics.NameAgentTokens, a, kind("cache_write"), float64(2*a.CacheWriteTokens)),
		series(metrics.NameAgentTokens, b, kind("output"), float64(b.OutputTokens)),
		series(metrics.NameAgentCost, a, nil, 2*a.CostUSD),
		series(metrics.NameAgentAttempts, a, map[string]string{"cost": "known"}, 2),
		series(metrics.NameAgentAttempts, b, map[string]string{"cost": "unknown"}, 1),
	} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("metrics lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, metrics.NameAgentCost+" backend=codex") {
		t.Errorf("an attempt of unknown cost added a cost series:\n%s", got)
	}

	// Many models: the label keeps a bounded set.
	for i := range 300 {
		u := attractor.Usage{Backend: "api", Model: fmt.Sprintf("m-%d", i), InputTokens: 1, CostSource: attractor.CostUnknown}
		_ = l.AttemptFinished(ctx, attractor.AttemptFinished{Outcome: attractor.Outcome{Usage: &u}})
	}
	got = exposition(t, reg)
	if !strings.Contains(got, "model=other") {
		t.Errorf("300 model names did not reach the bound")
	}
	if n := strings.Count(got, metrics.NameAgentAttempts+" "); n > 201 {
		t.Errorf("%d attempt series: the model label is not bounded", n)
	}
}
