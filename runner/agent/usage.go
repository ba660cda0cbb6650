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

// cost prices usage with the backend's configured price for the model
// (an exact name first, then patterns in name order). Without a price the
// cost is unknown, not zero.
func (b Backend) cost(model string, u Usage) (float64, bool) {
	p, ok := b.Prices[model]
	if !ok {
		for _, pat := range slices.Sorted(maps.Keys(b.Prices)) {
			if m, _ := doublestar.Match(pat, model); m {
				p, ok = b.Prices[pat], true
				break
			}
		}
	}
	if !ok {
		return 0, false
	}
	return (float64(u.InputTokens)*p.Input + float64(u.OutputTokens)*p.Output) / 1e6, true
}

// usageMeta is the Outcome.Meta part every backend reports.
func usageMeta(u Usage, cost float64, priced bool) map[string]any {
	m := map[string]any{"tokens_in": u.InputTokens, "tokens_out": u.OutputTokens}
	if priced {
		m["cost_usd"] = cost
	}
	return m
}

// writeAPIRecord writes usage.json and agent.json for an API session; a
// failure to write them is logged, not fatal: the node's work is done.
func (a *Agent) writeAPIRecord(ctx context.Context, req attractor.AgentRequest, sel selection, res sessionResult, cost float64, priced bool, runErr error, timedOut bool) {
	usage := map[string]any{"model": sel.model, "input_tokens": res.usage.InputTokens, "output_tokens": res.usage.OutputTokens,
		"turns": res.turns, "tool_rounds": res.rounds}
	if priced {
		usage["cost_usd"] = cost
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
