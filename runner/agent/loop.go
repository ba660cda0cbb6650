package agent

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// session is one run of the API agent loop: the model is called with the
// conversation so far; its tool calls are executed and their results sent
// back; this repeats until the model answers without calling a tool, or a
// limit is reached.
type session struct {
	p         Provider
	tools     *toolbox
	tr        *transcript
	log       *slog.Logger
	model     string
	effort    string
	system    string
	maxTokens int
	maxTurns  int // model calls
	maxRounds int // tool rounds
	// meter, when set, is spent into after each model call and asked
	// before the next; costOf prices a call's usage (nil: unknown).
	meter  *attractor.UsageMeter
	costOf func(Usage) (float64, bool)
}

// sessionResult is how a session ended.
type sessionResult struct {
	final  string // the model's last text
	turns  int
	rounds int
	limit  string // "max_turns" or "max_tool_rounds" when a limit stopped it
	usage  Usage
	// budget is the budget that stopped the session before a model call.
	budget *attractor.BudgetError
}

// run drives the session. The error is a provider failure (after
// retries) or the context ending; everything a tool does goes back to the
// model instead.
func (s *session) run(ctx context.Context, prompt string) (sessionResult, error) {
	msgs := []Message{{Role: RoleUser, Text: prompt}}
	var res sessionResult
	var last attractor.Usage // the last call's usage: the estimate of the next
	s.tr.event("start", map[string]any{"model": s.model, "effort": s.effort, "system": s.system, "prompt": prompt,
		"max_turns": s.maxTurns, "max_tool_rounds": s.maxRounds})
	for {
		if res.turns >= s.maxTurns {
			res.limit = "max_turns"
			return res, nil
		}
		if res.budget = s.meter.Over(last); res.budget != nil {
			s.tr.event("budget", map[string]any{"error": res.budget.Error()})
			return res, nil
		}
		resp, err := s.p.Complete(ctx, Request{Model: s.model, System: s.system, Messages: msgs,
			Tools: s.tools.specs(), MaxTokens: s.maxTokens, Effort: s.effort})
		if err != nil {
			s.tr.event("provider_error", map[string]any{"error": err.Error()})
			return res, err
		}
		res.turns++
		res.usage.add(resp.Usage)
		last = s.spend(resp.Usage)
		if err := s.meter.Spend(last); err != nil {
			res.budget = spendErr(err)
		}
		nameCalls(resp.Message.ToolCalls, res.turns)
		if resp.Message.Text != "" {
			res.final = resp.Message.Text
		}
		msgs = append(msgs, resp.Message)
		s.tr.event("assistant", map[string]any{"turn": res.turns, "text": resp.Message.Text, "tool_calls": resp.Message.ToolCalls,
			"stop_reason": resp.StopReason, "usage": resp.Usage})
		if len(resp.Message.ToolCalls) == 0 || res.budget != nil {
			return res, nil
		}
		if res.rounds >= s.maxRounds {
			res.limit = "max_tool_rounds"
			return res, nil
		}
		res.rounds++
		msgs = append(msgs, s.execute(ctx, resp.Message.ToolCalls))
		if err := ctx.Err(); err != nil {
			return res, err
		}
	}
}

// spend is one call's usage as the meter counts it, priced when it can be.
func (s *session) spend(u Usage) attractor.Usage {
	out := attractor.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens, CostSource: attractor.CostUnknown}
	if s.costOf != nil {
		if c, ok := s.costOf(u); ok {
			out.CostUSD, out.CostSource = c, attractor.CostPriced
		}
	}
	return out
}

// execute runs one round of tool calls, in order: later calls may depend
// on earlier ones (write, then run).
func (s *session) execute(ctx context.Context, calls []ToolCall) Message {
	m := Message{Role: RoleUser}
	for _, c := range calls {
		r := s.tools.call(ctx, c)
		m.ToolResults = append(m.ToolResults, r)
		s.tr.event("tool_result", map[string]any{"call_id": c.ID, "tool": c.Name, "is_error": r.IsError, "content": r.Content})
		if r.IsError {
			s.log.DebugContext(ctx, "tool error", "tool", c.Name, "error", r.Content)
		}
	}
	return m
}

// nameCalls gives an ID to tool calls that came without one (some
// OpenAI-compatible servers omit it); results must answer calls by ID.
func nameCalls(calls []ToolCall, turn int) {
	for i := range calls {
		if calls[i].ID == "" {
			calls[i].ID = fmt.Sprintf("call_%d_%d", turn, i+1)
		}
	}
}

func (r sessionResult) String() string {
	return fmt.Sprintf("%d model calls, %d tool rounds", r.turns, r.rounds)
}
