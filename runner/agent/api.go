package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

// runAPI runs the node with this package's agent loop.
func (a *Agent) runAPI(ctx context.Context, req attractor.AgentRequest, sel selection, key string, log *slog.Logger) (attractor.Outcome, error) {
	ws, err := openWorkspace(req.Workspace)
	if err != nil {
		return failure(attractor.ClassTransientInfra, "API agent: "+err.Error()), nil
	}
	defer ws.Close()
	jail := a.jail(req)
	ws.seen = jail.Path(req.Workspace)
	tr, err := newTranscript(filepath.Join(req.StageDir, "transcript.jsonl"), a.secret)
	if err != nil {
		return failure(attractor.ClassTransientInfra, "API agent: "+err.Error()), nil
	}
	s := &session{
		p:     retrying{p: a.provider(sel, key), retries: a.lim.ProviderRetries, base: time.Duration(a.lim.RetryBackoff), maxWait: time.Duration(a.lim.RetryMaxBackoff), log: log},
		tools: a.apiTools(req, ws, jail), tr: tr, log: log,
		model: sel.model, effort: sel.effort, system: systemPrompt(req, jail), maxTokens: sel.b.MaxTokens,
		maxTurns: a.lim.MaxTurns, maxRounds: a.lim.MaxToolRounds,
		meter: req.Usage, costOf: func(u Usage) (float64, bool) { return sel.b.cost(sel.model, u) },
	}
	sctx, cancel, timeout := a.withTimeout(ctx)
	defer cancel()
	res, runErr := s.run(sctx, req.Prompt)
	ownTimeout := sctx.Err() != nil && ctx.Err() == nil
	if err := tr.Close(); err != nil {
		log.WarnContext(ctx, "transcript incomplete", "err", err)
	}
	used := attemptUsage(sel, "", res.usage, nil)
	req.Usage.Finish(*used)
	timedOutNow := runErr != nil && sctx.Err() != nil
	a.writeAPIRecord(ctx, req, sel, res, used, runErr, timedOutNow)
	if timedOutNow {
		// Keep what the model said so far, as for a CLI: the engine
		// writes no response when it reports a timeout itself.
		a.keepResponse(ctx, req, res.final)
	}
	o, err := a.apiOutcome(ctx, req, sel, res, runErr, ownTimeout, timeout)
	if err != nil {
		return o, err
	}
	o.Usage = used
	o.Meta = withMeta(o.Meta, usageMeta(used))
	o.Meta["turns"], o.Meta["tool_rounds"] = res.turns, res.rounds
	return o, nil
}

// apiOutcome turns how the session ended into the node's outcome.
func (a *Agent) apiOutcome(ctx context.Context, req attractor.AgentRequest, sel selection, res sessionResult, runErr error, ownTimeout bool, timeout time.Duration) (attractor.Outcome, error) {
	if runErr != nil {
		if ctx.Err() != nil {
			return attractor.Outcome{}, fmt.Errorf("API agent: %w", ctx.Err()) // the engine reports its own timeout or cancel
		}
		if ownTimeout {
			o := timedOut(timeout)
			o.Response = res.final
			return o, nil
		}
		return a.providerFailure(sel, res, runErr), nil
	}
	if res.budget != nil {
		o := budgetFailure(res.budget, fmt.Sprintf("stopped before its next model call (%s)", res))
		o.Response = res.final
		return o, nil
	}
	if res.limit == "" {
		return finalVerdict(req, res.final), nil
	}
	if explicitSuccess(req, res.final) {
		o := finalVerdict(req, res.final)
		if o.Status == "" {
			o.Status = attractor.StatusSuccess
		}
		o.Notes = fmt.Sprintf("stopped at %s (%s) after declaring success", res.limit, res)
		return o, nil
	}
	o := failure(attractor.ClassBudgetExhausted, fmt.Sprintf(
		"the agent stopped at its %s limit (%s) without declaring success (status file or OUTCOME:SUCCESS); "+
			"split the task or raise agents.limits.%s", res.limit, res, res.limit))
	o.Response = res.final
	return o, nil
}

// providerFailure classes a failed model call: a rejected key is
// structural (no retry fixes it), another refused request deterministic
// (the same request fails the same way), the rest transient. The reason
// counts only the retries made.
func (a *Agent) providerFailure(sel selection, res sessionResult, err error) attractor.Outcome {
	msg := redact(err.Error(), a.secret)
	var pe *ProviderError
	if !errors.As(err, &pe) {
		return failure(attractor.ClassTransientInfra, fmt.Sprintf("model provider failed (%s): %s", res, msg))
	}
	switch {
	case pe.authFailure():
		return failure(attractor.ClassStructural, fmt.Sprintf("%s rejected the key in %s: %s",
			pe.Provider, sel.b.KeyEnv, redact(pe.Message, a.secret)))
	case !pe.retryable():
		return failure(attractor.ClassDeterministic, fmt.Sprintf("model provider refused the request (%s): %s; "+
			"check the node's llm_model and reasoning_effort and the backend's base_url", res, msg))
	case pe.Attempts > 1:
		return failure(attractor.ClassTransientInfra, fmt.Sprintf("model provider failed after %d retries (%s): %s", pe.Attempts-1, res, msg))
	}
	return failure(attractor.ClassTransientInfra, fmt.Sprintf("model provider failed (%s): %s", res, msg))
}

// provider returns the protocol client of the selected backend.
func (a *Agent) provider(sel selection, key string) Provider {
	if sel.b.API == APIAnthropic {
		return newAnthropic(sel.b.BaseURL, key, a.deps.HTTP)
	}
	return newOpenAI(sel.b.BaseURL, key, a.deps.HTTP)
}

// apiTools are the API loop's tools in ws; the shell runs in jail, the
// node's (nil: no sandbox).
func (a *Agent) apiTools(req attractor.AgentRequest, ws *workspace, jail *sandbox.Jail) *toolbox {
	return newToolbox(
		readFile{ws}, writeFile{ws}, editFile{ws},
		shellTool{dir: ws.dir, env: a.toolEnv(req), jail: jail, timeout: time.Duration(a.lim.ShellTimeout), maxTimeout: time.Duration(a.lim.ShellMaxTimeout)},
		globTool{ws}, grepTool{ws},
	)
}

// withTimeout applies agents.limits.timeout when the node has set none
// (the engine then gives no deadline); a node's own timeout is the
// engine's to report.
func (a *Agent) withTimeout(ctx context.Context) (context.Context, context.CancelFunc, time.Duration) {
	if _, ok := ctx.Deadline(); ok {
		ctx, cancel := context.WithCancel(ctx)
		return ctx, cancel, 0
	}
	d := time.Duration(a.lim.Timeout)
	ctx, cancel := context.WithTimeout(ctx, d)
	return ctx, cancel, d
}

func timedOut(d time.Duration) attractor.Outcome {
	return failure(attractor.ClassTransientInfra, fmt.Sprintf(
		"agent timed out after %s (agents.limits.timeout; set timeout on the node to change it)", d))
}

// systemPrompt tells the model where it is and how to report.
func systemPrompt(req attractor.AgentRequest, jail *sandbox.Jail) string {
	return "You are a careful software engineer working autonomously in a git worktree with the tools read_file, write_file, " +
		"edit_file, shell, glob and grep. Paths are relative to the worktree. Read before you edit, keep changes small and " +
		"focused, and run the project's checks with the shell tool before you declare success. " +
		fmt.Sprintf("Platform: %s/%s. Today: %s.\n\n", runtime.GOOS, runtime.GOARCH, time.Now().UTC().Format(time.DateOnly)) +
		preamble(req, jail, true)
}

func failure(class attractor.FailureClass, reason string) attractor.Outcome {
	return attractor.Outcome{Status: attractor.StatusFail, FailureClass: class, FailureReason: reason}
}
