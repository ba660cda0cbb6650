package agent

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// price is the backend's configured price for the model: an exact name
// first, then patterns in name order.
func (b Backend) price(model string) (Price, bool) {
	if p, ok := b.Prices[model]; ok {
		return p, true
	}
	for _, pat := range slices.Sorted(maps.Keys(b.Prices)) {
		if m, _ := doublestar.Match(pat, model); m {
			return b.Prices[pat], true
		}
	}
	return Price{}, false
}

// cost prices usage with the backend's configured price for the model.
// Without a price the cost is unknown, not zero.
func (b Backend) cost(model string, u Usage) (float64, bool) {
	p, ok := b.price(model)
	if !ok {
		return 0, false
	}
	read, write := p.Input, p.Input
	if p.CacheRead != nil {
		read = *p.CacheRead
	}
	if p.CacheWrite != nil {
		write = *p.CacheWrite
	}
	return (float64(u.InputTokens)*p.Input + float64(u.OutputTokens)*p.Output +
		float64(u.CacheReadTokens)*read + float64(u.CacheWriteTokens)*write) / 1e6, true
}

// attemptUsage is the record of an attempt's usage: tokens by kind, and
// the cost the CLI reported (reported), else the configured prices' (the
// backend prices the model), else none.
func attemptUsage(sel selection, model string, u Usage, reported *float64) *attractor.Usage {
	out := &attractor.Usage{Backend: sel.name, Provider: sel.b.Provider, Model: or(model, sel.model),
		InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CacheReadTokens: u.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens, CostSource: attractor.CostUnknown}
	if reported != nil {
		out.CostUSD, out.CostSource = *reported, attractor.CostReported
	} else if c, ok := sel.b.cost(out.Model, u); ok {
		out.CostUSD, out.CostSource = c, attractor.CostPriced
	}
	return out
}

// usageMeta is the Outcome.Meta part every backend reports.
func usageMeta(u *attractor.Usage) map[string]any {
	m := map[string]any{"tokens_in": u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens, "tokens_out": u.OutputTokens}
	if u.Costed() {
		m["cost_usd"] = u.CostUSD
	}
	return m
}

// writeAPIRecord writes usage.json and agent.json for an API session; a
// failure to write them is logged, not fatal: the node's work is done.
func (a *Agent) writeAPIRecord(ctx context.Context, req attractor.AgentRequest, sel selection, res sessionResult, used *attractor.Usage, runErr error, timedOut bool) {
	usage := map[string]any{"model": sel.model, "input_tokens": used.InputTokens, "output_tokens": used.OutputTokens,
		"cache_read_tokens": used.CacheReadTokens, "cache_write_tokens": used.CacheWriteTokens,
		"turns": res.turns, "tool_rounds": res.rounds, "cost_source": used.CostSource}
	if used.Costed() {
		usage["cost_usd"] = used.CostUSD
	}
	if res.limit != "" {
		usage["limit"] = res.limit
	}
	rec := map[string]any{"backend": sel.name, "kind": KindAPI, "api": sel.b.API, "base_url": sel.b.BaseURL,
		"model": sel.model, "reasoning_effort": sel.effort, "usage": usage, "timed_out": timedOut}
	if runErr != nil {
		rec["error"] = redact(runErr.Error(), a.secret)
	}
	a.writeJSON(ctx, filepath.Join(req.StageDir, "usage.json"), usage)
	a.writeJSON(ctx, filepath.Join(req.StageDir, "agent.json"), rec)
}

func (a *Agent) writeJSON(ctx context.Context, path string, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err == nil {
		err = os.WriteFile(path, append(b, '\n'), 0o644)
	}
	if err != nil {
		a.log.WarnContext(ctx, "could not write agent record", "path", path, "err", err)
	}
}
