package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

// cliRun is one CLI invocation and what it left.
type cliRun struct {
	argv       []string
	stdoutPath string
	stderrPath string
	res        sandbox.Result
	err        error
	// maxTurns, when set, is the turn limit the bot enforces itself on
	// Codex's event stream (codexTurnWatch), calling stop when it is
	// passed; limitHit records that it was.
	maxTurns int
	stop     func()
	limitHit bool
	// usage, when set, meters the usage the CLI streams (usageWatch);
	// what it spent and the budget that stopped the CLI end up here.
	usage *usageWatch
	// poll, when set, starts reading usage from where the CLI records it
	// as it goes (Gemini's session file) and returns its stop.
	poll      func() (stop func())
	liveSpent Usage
	liveCost  float64
	budget    *attractor.BudgetError
}

// runCLI runs a CLI agent in the worktree through the sandbox: prompt on
// stdin, output kept in the stage directory, the process group killed on
// timeout or cancellation.
func (a *Agent) runCLI(ctx context.Context, req attractor.AgentRequest, sel selection, key string) (attractor.Outcome, error) {
	home := ""
	if !sel.b.SharedHome {
		home = filepath.Join(req.StageDir, "home")
		if err := os.MkdirAll(home, 0o700); err != nil {
			return failure(attractor.ClassTransientInfra, fmt.Sprintf("agent %s: isolated HOME: %v", sel.name, err)), nil
		}
		if sel.b.CLI == CLIGemini {
			if err := geminiSettings(home, a.lim); err != nil {
				return failure(attractor.ClassTransientInfra, fmt.Sprintf("agent %s: isolated HOME: %v", sel.name, err)), nil
			}
		}
	}
	jail := a.jail(req)
	promptPath := filepath.Join(req.StageDir, "agent.prompt.md")
	if err := os.WriteFile(promptPath, []byte(preamble(req, jail, false)+req.Prompt), 0o644); err != nil {
		return failure(attractor.ClassTransientInfra, fmt.Sprintf("agent %s: write prompt: %v", sel.name, err)), nil
	}
	sctx, cancel, timeout := a.withTimeout(ctx)
	defer cancel()
	run := cliRun{argv: expandArgv(sel, map[string]string{
		"{prompt_file}": promptPath, "{workspace}": req.Workspace, "{stage_dir}": req.StageDir,
		"{model}": sel.model, "{reasoning_effort}": sel.effort,
	}, cliConfigArgs(sel.b, a.lim))}
	var stop context.CancelFunc
	sctx, stop = context.WithCancel(sctx)
	defer stop()
	run.stop = stop
	if sel.b.CLI == CLICodex {
		run.maxTurns = a.lim.MaxTurns
	}
	if req.Usage != nil {
		a.watchUsage(&run, sel, req, home, stop)
	}
	run.stdoutPath, run.stderrPath = cliLogPaths(req.StageDir, sel.b.CLI)
	env := a.cliEnv(req, sel, key, home, jail)
	if fail := a.cliProgram(&run, jail, env, req.Workspace, sel); fail != nil {
		return *fail, nil
	}
	if err := a.execCLI(sctx, &run, promptPath, req.Workspace, env, jail); err != nil {
		return failure(attractor.ClassTransientInfra, fmt.Sprintf("agent %s: %v", sel.name, err)), nil
	}
	var nf *sandbox.NotFoundError
	switch {
	case errors.As(run.err, &nf) && nf.Image != "":
		return *structural(fmt.Sprintf("agent backend %s: %v; or set agents.backends.%s.command to a program the image has",
			sel.name, nf, sel.name)), nil
	case errors.As(run.err, &nf):
		return *structural(fmt.Sprintf("agent backend %s: %v: install it on the kilroy-bot host or set agents.backends.%s.command "+
			"to the program and its arguments", sel.name, nf, sel.name)), nil
	case run.err != nil && ctx.Err() == nil && !run.res.TimedOut:
		return failure(attractor.ClassTransientInfra, fmt.Sprintf("agent %s: %s", sel.name, redact(run.err.Error(), a.secret))), nil
	}
	// The stage directory is the agent's to write in: read only a regular
	// file there, at most what the capped log could hold.
	out, err := safefile.TailPath(run.stdoutPath, a.lim.MaxLogBytes)
	if err != nil {
		return failure(attractor.ClassTransientInfra, fmt.Sprintf("agent %s: read output: %v", sel.name, err)), nil
	}
	rep := parseCLIOutput(sel.b.CLI, out)
	rep.Limit = rep.Limit || run.limitHit
	used := a.settleUsage(req, sel, run, rep)
	if sel.b.CLI == CLIGemini && rep.Error == "" && run.res.ExitCode != 0 {
		stderr, _ := os.ReadFile(run.stderrPath)
		rep.Error, rep.Limit = geminiStderrError(stderr)
	}
	run.res.TimedOut = run.res.TimedOut || ctx.Err() != nil
	if run.res.TimedOut && rep.Response == "" && sel.b.CLI == CLIGemini && home != "" {
		rep.Response = geminiSessionText(home, a.lim.MaxLogBytes)
	}
	a.writeCLIRecord(ctx, req, sel, run, rep, used)
	if run.budget != nil {
		o := budgetFailure(run.budget, "stopped before its next model call")
		o.Response, o.Usage = rep.Response, used
		o.Meta = withMeta(o.Meta, usageMeta(used))
		a.keepResponse(ctx, req, rep.Response)
		return o, nil
	}
	if run.res.TimedOut {
		// Keep what the agent said so far: the engine writes no response
		// when it reports the node's timeout or a cancellation itself.
		a.keepResponse(ctx, req, rep.Response)
	}
	switch {
	case ctx.Err() != nil:
		return attractor.Outcome{}, fmt.Errorf("agent %s: %w", sel.name, ctx.Err())
	case run.res.TimedOut:
		o := timedOut(timeout)
		o.Response = rep.Response
		return o, nil
	}
	o := a.cliOutcome(req, sel, run, rep)
	o.Usage = used
	o.Meta = withMeta(o.Meta, usageMeta(used))
	o.Meta["exit_code"] = run.res.ExitCode
	return o, nil
}

// execCLI starts the process and waits for it. The returned error is a
// local failure (log files); the process's own fate is in run.
func (a *Agent) execCLI(ctx context.Context, run *cliRun, promptPath, dir string, env []string, jail *sandbox.Jail) error {
	stdout, err := sandbox.NewCappedFile(run.stdoutPath, a.lim.MaxLogBytes)
	if err != nil {
		return err
	}
	defer stdout.Close()
	stderr, err := sandbox.NewCappedFile(run.stderrPath, a.lim.MaxLogBytes)
	if err != nil {
		return err
	}
	defer stderr.Close()
	stdin, err := os.Open(promptPath)
	if err != nil {
		return err
	}
	defer stdin.Close()
	var out io.Writer = stdout
	var watch *codexTurnWatch
	if run.maxTurns > 0 {
		watch = newCodexTurnWatch(stdout, run.maxTurns, run.stop)
		out = watch
	}
	if run.usage != nil && (run.poll == nil || run.usage.onLine != nil) {
		run.usage.w = out
		out = run.usage
	}
	stopPoll := func() {}
	if run.poll != nil {
		stopPoll = run.poll()
	}
	run.res, run.err = sandbox.Run(ctx, sandbox.Cmd{Argv: run.argv, Dir: dir, Env: env, Stdin: stdin, Stdout: out, Stderr: stderr, Jail: jail})
	stopPoll()
	run.limitHit = watch != nil && watch.limitHit()
	if run.usage != nil {
		run.liveSpent, run.liveCost, run.budget = run.usage.result()
	}
	if err := stdout.Close(); err != nil {
		return err
	}
	return stderr.Close()
}

// cliOutcome settles a finished CLI run. A status file decides (the
// engine applies it; the outcome mirrors it and keeps the exit details as
// the reason in case the file gives none); else the CLI's own limit, exit
// code and reported error; else an outcome marker in its final text.
func (a *Agent) cliOutcome(req attractor.AgentRequest, sel selection, run cliRun, rep cliReport) attractor.Outcome {
	why := ""
	switch {
	case run.limitHit:
		// Stopped by the bot, not failed: the limit decides below.
	case run.res.ExitCode != 0:
		why = fmt.Sprintf("%s exited with code %d: %s", run.argv[0], run.res.ExitCode, or(rep.Error, stderrTail(run.stderrPath)))
	case rep.Error != "":
		why = fmt.Sprintf("%s reported an error: %s", run.argv[0], rep.Error)
	case rep.Unfinished:
		// Exit 0 without the session's closing event: the CLI gave up on a
		// broken connection without saying so in its output.
		why = fmt.Sprintf("%s exited without finishing its session (no closing result event): %s",
			run.argv[0], or(stderrTail(run.stderrPath), "its connection to the model was probably cut"))
	}
	why = redact(why, a.secret)
	if st, ok := statusFileStatus(req); ok {
		o := attractor.Outcome{Status: st, Response: rep.Response}
		if o.IsFailure() {
			o.FailureReason = why
		}
		return o
	}
	switch {
	case rep.Limit && !explicitSuccess(req, rep.Response):
		how := "stopped at its turn limit"
		if run.limitHit {
			how = fmt.Sprintf("reached its turn limit (agents.limits.max_turns %d) and was stopped", run.maxTurns)
		}
		o := failure(attractor.ClassBudgetExhausted, fmt.Sprintf("%s %s without declaring success (status file or OUTCOME:SUCCESS)", sel.name, how))
		o.Response = rep.Response
		return o
	case rep.Unfinished && run.res.ExitCode == 0 && rep.Error == "":
		return attractor.Outcome{Status: attractor.StatusFail, FailureClass: attractor.ClassTransientInfra,
			FailureReason: why, Response: rep.Response}
	case why != "":
		// Without a class the CLI's words give, the engine infers one from
		// the reason.
		class := cliFailureClass(why + "\n" + stderrTail(run.stderrPath))
		if class == "" && rep.Retried {
			class = attractor.ClassTransientInfra
		}
		return attractor.Outcome{Status: attractor.StatusFail, FailureClass: class, FailureReason: why, Response: rep.Response}
	}
	return finalVerdict(req, rep.Response)
}

// expandArgv fills the command template: {prompt_file}, {workspace},
// {stage_dir}, {model} and {reasoning_effort} anywhere in an argument;
// {model_args} and {effort_args} as whole arguments, replaced by
// ModelArgs / EffortArgs when the node has a model / an effort and
// dropped otherwise, and {config_args} by config, the flavour's settings
// (Codex's -c overrides); each is appended at the end when the template
// lacks it.
func expandArgv(sel selection, vars map[string]string, config []string) []string {
	pairs := make([]string, 0, 2*len(vars))
	for k, v := range vars {
		pairs = append(pairs, k, v)
	}
	r := strings.NewReplacer(pairs...)
	groups := map[string][]string{"{model_args}": nil, "{effort_args}": nil, "{config_args}": config}
	if sel.model != "" {
		groups["{model_args}"] = sel.b.ModelArgs
	}
	if sel.effort != "" {
		groups["{effort_args}"] = sel.b.EffortArgs
	}
	var argv []string
	for _, arg := range sel.b.Command {
		if g, ok := groups[arg]; ok {
			argv = append(argv, g...)
			delete(groups, arg)
			continue
		}
		argv = append(argv, arg)
	}
	for _, name := range []string{"{config_args}", "{model_args}", "{effort_args}"} {
		argv = append(argv, groups[name]...) // only those the template did not place
	}
	for i, arg := range argv {
		argv[i] = r.Replace(arg)
	}
	return argv
}

func cliLogPaths(stageDir, flavour string) (stdout, stderr string) {
	ext := ".log"
	switch flavour {
	case CLIClaude, CLICodex:
		ext = ".jsonl"
	case CLIGemini:
		ext = ".json"
	}
	return filepath.Join(stageDir, "agent.stdout"+ext), filepath.Join(stageDir, "agent.stderr.log")
}

// stderrTailBytes is how much of the CLI's stderr a failure reason reads.
const stderrTailBytes = 64 << 10

// stderrTail is the end of the CLI's stderr for a failure reason.
func stderrTail(path string) string {
	b, err := safefile.TailPath(path, stderrTailBytes)
	if err != nil || len(strings.TrimSpace(string(b))) == 0 {
		return "no output on stderr"
	}
	return lastLines(string(b), 5, 800)
}

// writeCLIRecord writes agent.json: what ran and how it ended.
func (a *Agent) writeCLIRecord(ctx context.Context, req attractor.AgentRequest, sel selection, run cliRun, rep cliReport, used *attractor.Usage) {
	rec := map[string]any{
		"backend": sel.name, "kind": KindCLI, "cli": sel.b.CLI, "model": sel.model, "reasoning_effort": sel.effort,
		"argv": run.argv, "exit_code": run.res.ExitCode, "duration_ms": run.res.Duration.Milliseconds(),
		"timed_out": run.res.TimedOut, "lingered": run.res.Lingered,
		"stdout": filepath.Base(run.stdoutPath), "stderr": filepath.Base(run.stderrPath),
		"usage": used,
	}
	if used.Costed() {
		rec["cost_usd"] = used.CostUSD
	}
	if rep.Error != "" {
		rec["error"] = redact(rep.Error, a.secret)
	}
	a.writeJSON(ctx, filepath.Join(req.StageDir, "agent.json"), rec)
}

// keepResponse writes response.md for an attempt the engine ends itself.
func (a *Agent) keepResponse(ctx context.Context, req attractor.AgentRequest, response string) {
	if err := os.WriteFile(filepath.Join(req.StageDir, "response.md"), []byte(redact(response, a.secret)), 0o644); err != nil {
		a.log.WarnContext(ctx, "could not keep the response", "err", err)
	}
}
