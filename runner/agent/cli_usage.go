package agent

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// usageWatch passes a CLI's stdout on to w and meters the usage its
// stream reports as it arrives: Claude Code's stream-json gives every
// assistant message with the usage of the model call that made it (one
// event per content block, all with the message's id and usage). Each
// call's usage is spent into the run's meter once; when the run has
// reached its budget, or one more call like the last would pass it, the
// watch calls stop (once), which ends the CLI's process group before its
// next model call.
type usageWatch struct {
	w     io.Writer
	meter *attractor.UsageMeter
	price func(Usage) attractor.Usage
	stop  func()

	// onLine, when set, is called (with mu held) for every line of the
	// stream, after the stream's own usage is read: Codex's stream has
	// none, but a completed item means the call that asked for it is in
	// its rollout file, read then.
	onLine func(line []byte)

	mu     sync.Mutex
	lines  lineBuffer
	seen   map[string]Usage // by message id: the usage spent for it
	spent  Usage            // everything spent so far
	cost   float64          // the priced cost spent so far
	budget *attractor.BudgetError
}

func newUsageWatch(w io.Writer, meter *attractor.UsageMeter, price func(Usage) attractor.Usage, stop func()) *usageWatch {
	return &usageWatch{w: w, meter: meter, price: price, stop: stop, seen: map[string]Usage{}, lines: lineBuffer{max: 4 * maxWatchedLine}}
}

// Write passes p on, then reads the lines it completes.
func (u *usageWatch) Write(p []byte) (int, error) {
	n, err := u.w.Write(p)
	u.mu.Lock()
	defer u.mu.Unlock()
	u.lines.feed(p, func(line []byte) {
		u.event(line)
		if u.onLine != nil {
			u.onLine(line)
		}
	})
	return n, err
}

// event spends the usage of one assistant message, as far as it grew.
func (u *usageWatch) event(line []byte) {
	if !bytes.Contains(line, []byte(`"assistant"`)) || !bytes.Contains(line, []byte(`"usage"`)) {
		return
	}
	var ev struct {
		Type    string `json:"type"`
		Message struct {
			ID    string `json:"id"`
			Usage struct {
				Input       int64 `json:"input_tokens"`
				CacheCreate int64 `json:"cache_creation_input_tokens"`
				CacheRead   int64 `json:"cache_read_input_tokens"`
				Output      int64 `json:"output_tokens"`
			} `json:"usage"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &ev) != nil || ev.Type != "assistant" || ev.Message.ID == "" {
		return
	}
	u.observe(ev.Message.ID, Usage{InputTokens: ev.Message.Usage.Input, OutputTokens: ev.Message.Usage.Output,
		CacheReadTokens: ev.Message.Usage.CacheRead, CacheWriteTokens: ev.Message.Usage.CacheCreate})
}

// observe spends what model call id used beyond what was spent for it,
// and stops the CLI once the budget is reached or one more call like it
// would pass it. The caller holds u.mu.
func (u *usageWatch) observe(id string, now Usage) { u.spendUpTo(id, now, now) }

// observeTotal is observe for a session's running total, the next call
// estimated like the last one. The caller holds u.mu.
func (u *usageWatch) observeTotal(total, last Usage) { u.spendUpTo("session", total, last) }

// spendUpTo spends what id used beyond what was spent for it; next is
// the estimate of the next call. The caller holds u.mu.
func (u *usageWatch) spendUpTo(id string, now, next Usage) {
	delta := now.sub(u.seen[id])
	if delta.tokens() <= 0 {
		return
	}
	u.seen[id] = now
	u.spent.add(delta)
	d := u.price(delta)
	u.cost += d.CostUSD
	err := u.meter.Spend(d)
	if u.budget != nil {
		return
	}
	if u.budget = spendErr(err); u.budget == nil {
		u.budget = u.meter.Over(u.price(next))
	}
	if u.budget != nil {
		u.stop()
	}
}

// result is what the watch spent, and the budget that stopped the CLI.
func (u *usageWatch) result() (Usage, float64, *attractor.BudgetError) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.spent, u.cost, u.budget
}

// settleUsage is the attempt's usage: what the CLI reported when it ended
// (its own cost, else the configured prices'), or, when it was stopped
// before it could say, what its stream showed on the way. The meter gets
// what the stream did not spend already, and counts the attempt.
func (a *Agent) settleUsage(req attractor.AgentRequest, sel selection, run cliRun, rep cliReport) *attractor.Usage {
	u := rep.Usage
	if u.tokens() == 0 && run.liveSpent.tokens() > 0 {
		u = run.liveSpent
	}
	used := attemptUsage(sel, rep.Model, u, rep.Cost)
	rest := used.CostUSD - run.liveCost
	delta := *attemptUsage(sel, rep.Model, u.sub(run.liveSpent), &rest)
	delta.CostSource = used.CostSource
	if delta.Tokens() != 0 || delta.CostUSD != 0 {
		_ = req.Usage.Spend(delta) // the attempt is over: a refusal only stops the next
	}
	req.Usage.Finish(*used)
	return used
}

// watchUsage sets up the run's usage watch where the CLI shows usage as
// it goes: Claude Code in its stream, Gemini CLI and Codex in the session
// files they write under the isolated HOME.
func (a *Agent) watchUsage(run *cliRun, sel selection, req attractor.AgentRequest, home string, stop func()) {
	var read func(string, int64, *usageWatch)
	switch {
	case sel.b.CLI == CLIClaude:
	case sel.b.CLI == CLIGemini && home != "":
		read = geminiSessionUsage
	case sel.b.CLI == CLICodex && home != "":
		read = codexSessionUsage
	default:
		return
	}
	run.usage = newUsageWatch(nil, req.Usage, func(u Usage) attractor.Usage { return *attemptUsage(sel, "", u, nil) }, stop)
	if sel.b.CLI == CLICodex {
		w, limit := run.usage, a.lim.MaxLogBytes
		w.onLine = func(line []byte) {
			if !bytes.Contains(line, []byte(`"item.completed"`)) {
				return
			}
			if total, last := codexTotal(home, limit); total != nil {
				w.observeTotal(*total, *last)
			}
		}
	}
	if read != nil {
		w, limit := run.usage, a.lim.MaxLogBytes
		run.poll = func() func() { return sessionUsagePoll(home, limit, w, read) }
	}
}
